//! The HTML page of `bmk report` and `bmk compare`: one self-contained file, the CSS
//! inline and every chart an inline SVG, no script and no reference to any other
//! resource, so it opens offline and reads the same without JavaScript. The layout is
//! a `minijinja` template (`page.html.j2`, HTML-escaped); charts are inserted as they
//! are, since plotters escapes their text itself.

use minijinja::{context, Environment};
use serde::Serialize;

use crate::Error;

const TEMPLATE: &str = include_str!("page.html.j2");

/// Renders the page for `kind` (`report` or `compare`) from the serialisable view
/// `data`.
pub fn render<T: Serialize>(kind: &str, data: &T) -> Result<String, Error> {
    let mut env = Environment::new();
    env.add_template("page.html", TEMPLATE)?;
    env.add_filter("num", |v: f64, decimals: usize| format!("{v:.decimals$}"));
    let page = env
        .get_template("page.html")?
        .render(context! { kind => kind, r => data, version => env!("CARGO_PKG_VERSION") })?;
    Ok(page)
}
