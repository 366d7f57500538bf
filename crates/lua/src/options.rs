//! Script-declared options: reading `sysbench.cmdline.options`, inferring their types,
//! formatting their help text, and the values `sysbench.opt` reads.
//!
//! Parsing command-line syntax is the CLI's job; this module only turns a script's
//! declarations into [`OptSpec`]s and [`OptValue`]s into Lua values.

use std::collections::HashMap;

use bmk_engine::options::{OptKind, OptSpec, OptValue, OptionSet};
use mlua::{Function, Lua, Table, Value};

use crate::error::{LuaError, LuaErrorKind};

/// `sysbench.cmdline.ARG_*` values, in the order the prelude defines them.
fn kind_of_code(code: i64) -> Option<OptKind> {
    Some(match code {
        0 | 5 => OptKind::String,
        1 => OptKind::Bool,
        2 => OptKind::Int,
        3 => OptKind::Size,
        4 => OptKind::Double,
        6 => OptKind::List,
        7 => OptKind::File,
        _ => return None,
    })
}

/// A script option declaration as found in `sysbench.cmdline.options`.
pub(crate) struct Declared {
    pub spec: OptSpec,
    pub validator: Option<Function>,
}

fn bad_decl(name: &str, why: &str) -> LuaError {
    LuaError::new(
        LuaErrorKind::Option,
        format!(
            "invalid declaration of script option '{name}' in sysbench.cmdline.options: {why} \
             (expected name = {{description, default [, type [, validator]]}})"
        ),
    )
}

fn number_text(v: f64, kind: OptKind) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else if kind == OptKind::Int {
        format!("{}", v.trunc() as i64)
    } else {
        format!("{v}")
    }
}

/// The default as the user would type it.
fn default_text(value: &Value, kind: OptKind) -> Result<Option<String>, String> {
    Ok(match value {
        Value::Nil => None,
        Value::Boolean(b) => Some(if *b { "on" } else { "off" }.to_string()),
        Value::Integer(i) => Some(i.to_string()),
        Value::Number(n) => Some(number_text(*n, kind)),
        Value::String(s) => Some(s.to_string_lossy()),
        Value::Table(t) => {
            let mut items = Vec::new();
            for v in t.sequence_values::<Value>() {
                let v = v.map_err(|e| e.to_string())?;
                match default_text(&v, OptKind::String)? {
                    Some(s) => items.push(s),
                    None => continue,
                }
            }
            Some(items.join(","))
        }
        other => return Err(format!("unsupported default of type {}", other.type_name())),
    })
}

/// Whether the script declares any option in `sysbench.cmdline.options`.
pub(crate) fn has_declarations(lua: &Lua) -> Result<bool, LuaError> {
    let sb: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sb.get("cmdline")?;
    Ok(match cmdline.get::<Value>("options")? {
        Value::Table(t) => t.pairs::<Value, Value>().next().is_some(),
        Value::Nil => false,
        _ => true,
    })
}

/// Reads `sysbench.cmdline.options` of `lua`, sorted by name.
pub(crate) fn declared(lua: &Lua) -> Result<Vec<Declared>, LuaError> {
    let sb: Table = lua.globals().get("sysbench")?;
    let cmdline: Table = sb.get("cmdline")?;
    let options: Value = cmdline.get("options")?;
    let options = match options {
        Value::Table(t) => t,
        Value::Nil => return Ok(Vec::new()),
        other => {
            return Err(LuaError::new(
                LuaErrorKind::Option,
                format!(
                    "sysbench.cmdline.options must be a table, not a {}",
                    other.type_name()
                ),
            ))
        }
    };
    let mut out = Vec::new();
    for pair in options.pairs::<Value, Value>() {
        let (name, decl) = pair?;
        let name = match name {
            Value::String(s) => s.to_string_lossy(),
            other => return Err(bad_decl(&format!("{other:?}"), "the name is not a string")),
        };
        let decl = match decl {
            Value::Table(t) => t,
            _ => return Err(bad_decl(&name, "the declaration is not a table")),
        };
        let help = match decl.get::<Value>(1)? {
            Value::String(s) => s.to_string_lossy(),
            Value::Nil => String::new(),
            _ => return Err(bad_decl(&name, "the description is not a string")),
        };
        let default: Value = decl.get(2)?;
        let kind = match decl.get::<Value>(3)? {
            Value::Nil => match &default {
                Value::Boolean(_) => OptKind::Bool,
                Value::Integer(_) | Value::Number(_) => OptKind::Double,
                Value::Table(_) => OptKind::List,
                _ => OptKind::String,
            },
            Value::Integer(c) => {
                kind_of_code(c).ok_or_else(|| bad_decl(&name, "unknown option type"))?
            }
            Value::Number(c) => {
                kind_of_code(c as i64).ok_or_else(|| bad_decl(&name, "unknown option type"))?
            }
            _ => {
                return Err(bad_decl(
                    &name,
                    "the type is not a sysbench.cmdline.ARG_* value",
                ))
            }
        };
        let default = default_text(&default, kind).map_err(|why| bad_decl(&name, &why))?;
        let validator = match decl.get::<Value>(4)? {
            Value::Function(f) => Some(f),
            Value::Nil => None,
            _ => return Err(bad_decl(&name, "the validator is not a function")),
        };
        let mut spec = OptSpec::new(&name, kind, default.as_deref(), &help);
        spec.name = name;
        out.push(Declared { spec, validator });
    }
    out.sort_by(|a, b| a.spec.name.cmp(&b.spec.name));
    Ok(out)
}

/// Formats option help the sysbench way: `  --name=N description [default]`, sorted
/// by name, descriptions aligned one column after the longest option, and a blank line
/// after the list (none when there are no options).
pub fn format_options_help(specs: &[OptSpec]) -> String {
    let mut specs: Vec<&OptSpec> = specs.iter().collect();
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    let lefts: Vec<String> = specs
        .iter()
        .map(|s| format!("  --{}{}", s.name, s.kind.placeholder()))
        .collect();
    let width = lefts.iter().map(String::len).max().unwrap_or(0) + 1;
    let mut out = String::new();
    for (spec, left) in specs.iter().zip(&lefts) {
        out.push_str(&format!("{left:<width$}{}", spec.help));
        if let Some(d) = &spec.default {
            out.push_str(&format!(" [{d}]"));
        }
        out.push('\n');
    }
    // sysbench ends the list with a blank line.
    if !out.is_empty() {
        out.push('\n');
    }
    out
}

/// What a script option declared without a default reads as when not given, as in
/// sysbench: the empty string, 0, an empty list, and for a boolean `true` (sysbench
/// takes a boolean given no value as switched on).
fn empty_value(lua: &Lua, kind: OptKind) -> mlua::Result<Value> {
    Ok(match kind {
        OptKind::Bool => Value::Boolean(true),
        OptKind::Int | OptKind::Size | OptKind::Double => Value::Number(0.0),
        OptKind::List => Value::Table(lua.create_table()?),
        OptKind::String | OptKind::File => Value::String(lua.create_string("")?),
    })
}

/// The Lua value of an option value: booleans, numbers, strings, arrays of strings.
pub(crate) fn lua_value(lua: &Lua, v: &OptValue) -> mlua::Result<Value> {
    Ok(match v {
        OptValue::Bool(b) => Value::Boolean(*b),
        OptValue::Int(i) => Value::Number(*i as f64),
        OptValue::Size(s) => Value::Number(*s as f64),
        OptValue::Double(d) => Value::Number(*d),
        OptValue::Str(s) => Value::String(lua.create_string(s)?),
        OptValue::List(items) => {
            Value::Table(lua.create_sequence_from(items.iter().map(String::as_str))?)
        }
    })
}

/// The value `sysbench.opt[key]` reads: the typed value of a declared option, the raw
/// string of a given option nothing declared, or nil. Keys are the underscore
/// spelling only, as in sysbench. With a `view` (invoked as sysbench), the general
/// options are sysbench's only, an unset string or list reads as empty as sysbench's
/// do, and `mysql_ssl` is sysbench's switch.
pub(crate) fn opt_value(
    lua: &Lua,
    options: &OptionSet,
    script_kinds: &HashMap<String, OptKind>,
    view: Option<&[&str]>,
    key: &str,
) -> mlua::Result<Value> {
    if key.contains('-') {
        return Ok(Value::Nil);
    }
    let script_option = script_kinds.contains_key(key);
    if let Some(view) = view {
        if !script_option && options.is_declared(key) {
            if !view.contains(&key) {
                return Ok(Value::Nil);
            }
            if key == "mysql_ssl" {
                let mode = options.string(key).unwrap_or_default();
                return Ok(Value::Boolean(crate::sysbench_env::mysql_ssl_switch(&mode)));
            }
            return match options.get(key) {
                Some(v) => lua_value(lua, &v),
                None => match options.spec(key).map(|s| s.kind) {
                    Some(OptKind::List) => Ok(Value::Table(lua.create_table()?)),
                    Some(OptKind::String | OptKind::File) => {
                        Ok(Value::String(lua.create_string("")?))
                    }
                    _ => Ok(Value::Nil),
                },
            };
        }
        if !script_option && view.contains(&key) && options.raw(key).is_none() {
            // An option of sysbench's that bmk does not have: an unset string.
            return Ok(Value::String(lua.create_string("")?));
        }
    }
    if options.is_declared(key) {
        return match (options.get(key), script_kinds.get(key)) {
            (Some(v), _) => lua_value(lua, &v),
            (None, Some(kind)) => empty_value(lua, *kind),
            (None, None) => Ok(Value::Nil),
        };
    }
    match options.raw(key) {
        Some(raw) => Ok(Value::String(lua.create_string(raw)?)),
        None => Ok(Value::Nil),
    }
}

/// Every key of `sysbench.opt` that has a value (with a `view`: sysbench's general
/// options, the script's own and any other given).
pub(crate) fn opt_keys(
    options: &OptionSet,
    script_kinds: &HashMap<String, OptKind>,
    view: Option<&[&str]>,
) -> Vec<String> {
    let mut keys: Vec<String> = match view {
        Some(view) => view
            .iter()
            .map(|k| k.to_string())
            .chain(
                options
                    .specs()
                    .map(OptSpec::key)
                    .filter(|k| script_kinds.contains_key(k) && options.get(k).is_some()),
            )
            .collect(),
        None => options
            .specs()
            .filter(|spec| options.get(&spec.name).is_some())
            .map(OptSpec::key)
            .collect(),
    };
    keys.extend(options.undeclared_given());
    keys
}
