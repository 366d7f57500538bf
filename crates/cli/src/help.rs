//! `--help` and `<test> help` text: option tables aligned in one column per group.

use bmk_engine::options::OptSpec;

/// One aligned block of `  --name=TYPE  description [default]` lines.
pub fn option_lines(specs: &[OptSpec]) -> String {
    let heads: Vec<String> = specs
        .iter()
        .map(|s| format!("  --{}{}", s.name, s.kind.placeholder()))
        .collect();
    let width = heads.iter().map(|h| h.len()).max().unwrap_or(0);
    let mut out = String::new();
    for (spec, head) in specs.iter().zip(heads) {
        let mut line = format!("{head:<width$} {}", spec.help);
        if let Some(choices) = &spec.choices {
            line.push_str(&format!(" {{{}}}", choices.join(",")));
        }
        if let Some(d) = &spec.default {
            line.push_str(&format!(" [{d}]"));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmk_engine::options::OptKind;

    #[test]
    fn descriptions_start_in_one_column() {
        let text = option_lines(&[
            OptSpec::new("threads", OptKind::Int, Some("1"), "workers"),
            OptSpec::new("db-debug", OptKind::Bool, Some("off"), "trace"),
        ]);
        assert_eq!(
            text,
            "  --threads=N         workers [1]\n  --db-debug[=on|off] trace [off]\n"
        );
    }
}
