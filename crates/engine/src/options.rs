//! Typed option definitions and the sysbench value grammar.
//!
//! Everything that declares options (the general engine options, the built-in tests,
//! SQL drivers, Lua scripts) describes them with [`OptSpec`]; everything that reads
//! them gets an [`OptValue`] already checked against the declared [`OptKind`]. This
//! module knows the value grammar (booleans, size suffixes, lists) but not the command
//! line's shape (`--name=value`, positional arguments): that belongs to the CLI.

use std::collections::BTreeMap;
use std::fmt;

/// The type of an option, as sysbench's `ARG_*` constants define them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptKind {
    /// `--opt` or `--opt=on|off|true|false|yes|no|1|0`.
    Bool,
    /// A signed integer.
    Int,
    /// A byte size with an optional `K`, `M`, `G` or `T` suffix (powers of 1024).
    Size,
    /// A floating-point number.
    Double,
    /// Any string.
    String,
    /// A comma-separated list of strings.
    List,
    /// A file name.
    File,
}

impl OptKind {
    /// The placeholder shown after `=` in help output.
    pub fn placeholder(self) -> &'static str {
        match self {
            OptKind::Bool => "[=on|off]",
            OptKind::Int | OptKind::Double => "=N",
            OptKind::Size => "=SIZE",
            OptKind::String => "=STRING",
            OptKind::List => "=[LIST,...]",
            OptKind::File => "=FILENAME",
        }
    }
}

/// One declared option.
#[derive(Debug, Clone, PartialEq)]
pub struct OptSpec {
    /// Name as declared (dashes or underscores; both spellings are accepted).
    pub name: String,
    /// Value type.
    pub kind: OptKind,
    /// Default as the user would type it; `None` means "no value".
    pub default: Option<String>,
    /// One-line description for `help` output.
    pub help: String,
    /// Values the option accepts, when it is an enumeration (checked case-insensitively).
    pub choices: Option<Vec<String>>,
    /// Inclusive numeric range for `Int`, `Size` and `Double` options, and for every
    /// item of a `List` option that has one (a list of numbers, such as ports).
    pub range: Option<(f64, f64)>,
    /// Whether 0 is accepted besides [`range`](Self::range): the "0 turns it off"
    /// options whose other values must not come near 0 (`--percentile`,
    /// `--report-interval`).
    pub zero_allowed: bool,
}

impl OptSpec {
    /// A new option with no choices and no range.
    pub fn new(name: &str, kind: OptKind, default: Option<&str>, help: &str) -> OptSpec {
        OptSpec {
            name: name.to_string(),
            kind,
            default: default.map(str::to_string),
            help: help.to_string(),
            choices: None,
            range: None,
            zero_allowed: false,
        }
    }

    /// Restricts the option to a set of values.
    pub fn with_choices(mut self, choices: &[&str]) -> OptSpec {
        self.choices = Some(choices.iter().map(|c| c.to_string()).collect());
        self
    }

    /// Restricts a numeric option to `[min, max]`.
    pub fn with_range(mut self, min: f64, max: f64) -> OptSpec {
        self.range = Some((min, max));
        self
    }

    /// Restricts a numeric option to 0 (off) or `[min, max]`.
    pub fn with_range_or_zero(mut self, min: f64, max: f64) -> OptSpec {
        self.range = Some((min, max));
        self.zero_allowed = true;
        self
    }

    /// The canonical key: dashes turned into underscores (the `sysbench.opt` spelling).
    pub fn key(&self) -> String {
        canonical(&self.name)
    }

    /// Parses and validates `raw` against this option.
    pub fn parse(&self, raw: &str) -> Result<OptValue, OptionError> {
        let bad = |allowed: String| OptionError::BadValue {
            option: self.name.replace('_', "-"),
            value: raw.to_string(),
            allowed,
        };
        let value = match self.kind {
            OptKind::Bool => OptValue::Bool(
                parse_bool(raw)
                    .ok_or_else(|| bad("on, off, true, false, yes, no, 1 or 0".into()))?,
            ),
            OptKind::Int => {
                let v = parse_int(raw).ok_or_else(|| bad(self.range_text("an integer")))?;
                self.check_range(v as f64).map_err(bad)?;
                OptValue::Int(v)
            }
            OptKind::Size => {
                let v = parse_size(raw).ok_or_else(|| {
                    bad(self.range_text("a size: a number with an optional K, M, G or T suffix"))
                })?;
                self.check_range(v as f64).map_err(bad)?;
                OptValue::Size(v)
            }
            OptKind::Double => {
                let v = raw
                    .trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| bad(self.range_text("a number")))?;
                self.check_range(v).map_err(bad)?;
                OptValue::Double(v)
            }
            OptKind::String | OptKind::File => OptValue::Str(raw.to_string()),
            OptKind::List => {
                let items = parse_list(raw);
                if self.range.is_some() {
                    let what = self.range_text("a comma-separated list of integers");
                    for item in items.iter().filter(|i| !i.is_empty()) {
                        let v = parse_int(item).ok_or_else(|| bad(what.clone()))?;
                        self.check_range(v as f64).map_err(|_| bad(what.clone()))?;
                    }
                }
                OptValue::List(items)
            }
        };
        if let Some(choices) = &self.choices {
            let ok = match &value {
                OptValue::Str(s) => choices.iter().any(|c| c.eq_ignore_ascii_case(s)),
                OptValue::List(items) => items
                    .iter()
                    .all(|s| choices.iter().any(|c| c.eq_ignore_ascii_case(s))),
                _ => true,
            };
            if !ok {
                return Err(bad(format!("one of: {}", choices.join(", "))));
            }
        }
        Ok(value)
    }

    fn range_text(&self, what: &str) -> String {
        match self.range {
            Some((lo, hi)) if self.zero_allowed => {
                format!("{what} from {} to {}, or 0", fmt_num(lo), fmt_num(hi))
            }
            Some((lo, hi)) => format!("{what} from {} to {}", fmt_num(lo), fmt_num(hi)),
            None => what.to_string(),
        }
    }

    fn check_range(&self, v: f64) -> Result<(), String> {
        match self.range {
            _ if v == 0.0 && self.zero_allowed => Ok(()),
            // NaN compares false with everything: it must fail here, not slip through.
            Some((lo, hi)) if !(v >= lo && v <= hi) => Err(self.range_text("a value")),
            _ => Ok(()),
        }
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e18 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// A parsed option value.
#[derive(Debug, Clone, PartialEq)]
pub enum OptValue {
    /// Boolean.
    Bool(bool),
    /// Integer.
    Int(i64),
    /// Byte size.
    Size(u64),
    /// Floating point.
    Double(f64),
    /// String or file name.
    Str(String),
    /// List of strings.
    List(Vec<String>),
}

impl OptValue {
    /// The value as an integer, when it is numeric.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            OptValue::Int(v) => Some(*v),
            OptValue::Size(v) => i64::try_from(*v).ok(),
            OptValue::Double(v) => Some(*v as i64),
            OptValue::Bool(b) => Some(*b as i64),
            OptValue::Str(s) => parse_int(s),
            OptValue::List(_) => None,
        }
    }

    /// The value as a float, when it is numeric.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            OptValue::Double(v) => Some(*v),
            OptValue::Int(v) => Some(*v as f64),
            OptValue::Size(v) => Some(*v as f64),
            OptValue::Bool(b) => Some(*b as i64 as f64),
            OptValue::Str(s) => s.trim().parse().ok(),
            OptValue::List(_) => None,
        }
    }

    /// The value as a boolean (numbers: non-zero is true).
    pub fn as_bool(&self) -> bool {
        match self {
            OptValue::Bool(b) => *b,
            OptValue::Int(v) => *v != 0,
            OptValue::Size(v) => *v != 0,
            OptValue::Double(v) => *v != 0.0,
            OptValue::Str(s) => parse_bool(s).unwrap_or(false),
            OptValue::List(l) => !l.is_empty(),
        }
    }
}

impl fmt::Display for OptValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptValue::Bool(b) => f.write_str(if *b { "on" } else { "off" }),
            OptValue::Int(v) => write!(f, "{v}"),
            OptValue::Size(v) => write!(f, "{}", format_size(*v)),
            OptValue::Double(v) => write!(f, "{v}"),
            OptValue::Str(s) => f.write_str(s),
            OptValue::List(l) => f.write_str(&l.join(",")),
        }
    }
}

/// An option problem, worded for the user.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OptionError {
    /// The option is not declared by anything.
    #[error("invalid option: {0}")]
    Unknown(String),
    /// The value does not fit the option's type, range or choices.
    #[error("invalid value '{value}' for option --{option}: expected {allowed}")]
    BadValue {
        /// Option name as the user would type it.
        option: String,
        /// The value given.
        value: String,
        /// What the option accepts.
        allowed: String,
    },
}

/// The canonical spelling of an option name (`-` and `_` are the same character).
pub fn canonical(name: &str) -> String {
    name.replace('-', "_")
}

/// Parses sysbench's boolean spellings.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Some(true),
        "off" | "false" | "no" | "0" => Some(false),
        _ => None,
    }
}

/// Parses a decimal integer (an optional sign, then digits).
pub fn parse_int(s: &str) -> Option<i64> {
    s.trim().parse::<i64>().ok()
}

/// Parses a size with an optional `K`/`M`/`G`/`T` suffix (powers of 1024; `b` ignored).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let s = s.strip_suffix(['b', 'B']).unwrap_or(s);
    let (digits, mult) = match s.chars().last()? {
        'k' | 'K' => (&s[..s.len() - 1], 1u64 << 10),
        'm' | 'M' => (&s[..s.len() - 1], 1 << 20),
        'g' | 'G' => (&s[..s.len() - 1], 1 << 30),
        't' | 'T' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(mult)
}

/// Formats a size the way help output shows defaults (`64K`, `2G`).
pub fn format_size(v: u64) -> String {
    for (shift, suffix) in [(40, 'T'), (30, 'G'), (20, 'M'), (10, 'K')] {
        if v >= (1 << shift) && v.is_multiple_of(1 << shift) {
            return format!("{}{}", v >> shift, suffix);
        }
    }
    v.to_string()
}

/// Splits a comma-separated list (empty string = empty list).
pub fn parse_list(s: &str) -> Vec<String> {
    if s.is_empty() {
        return Vec::new();
    }
    s.split(',').map(|p| p.trim().to_string()).collect()
}

/// A set of declared options and the values given for them.
///
/// Values are stored raw and parsed on declaration and on assignment, so an option
/// given before the declaring script is loaded can still be validated later.
#[derive(Debug, Clone, Default)]
pub struct OptionSet {
    specs: BTreeMap<String, OptSpec>,
    given: BTreeMap<String, String>,
}

impl OptionSet {
    /// An empty set.
    pub fn new() -> OptionSet {
        OptionSet::default()
    }

    /// Declares options; a later declaration of the same name replaces the earlier one.
    pub fn declare(&mut self, specs: impl IntoIterator<Item = OptSpec>) {
        for spec in specs {
            self.specs.insert(spec.key(), spec);
        }
    }

    /// Whether an option of that name is declared.
    pub fn is_declared(&self, name: &str) -> bool {
        self.specs.contains_key(&canonical(name))
    }

    /// The declaration of an option.
    pub fn spec(&self, name: &str) -> Option<&OptSpec> {
        self.specs.get(&canonical(name))
    }

    /// Every declaration, sorted by canonical name.
    pub fn specs(&self) -> impl Iterator<Item = &OptSpec> {
        self.specs.values()
    }

    /// Records a value given by the user, validating it if the option is declared.
    pub fn set(&mut self, name: &str, raw: &str) -> Result<(), OptionError> {
        let key = canonical(name);
        if let Some(spec) = self.specs.get(&key) {
            spec.parse(raw)?;
        }
        self.given.insert(key, raw.to_string());
        Ok(())
    }

    /// Whether the user gave a value for the option.
    pub fn is_given(&self, name: &str) -> bool {
        self.given.contains_key(&canonical(name))
    }

    /// Names of given options that nothing declared (as canonical keys).
    pub fn undeclared_given(&self) -> Vec<String> {
        self.given
            .keys()
            .filter(|k| !self.specs.contains_key(*k))
            .cloned()
            .collect()
    }

    /// Every given value, raw, by canonical key.
    pub fn given(&self) -> impl Iterator<Item = (&str, &str)> {
        self.given.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The raw value of an option: the given one, else the default.
    pub fn raw(&self, name: &str) -> Option<String> {
        let key = canonical(name);
        self.given
            .get(&key)
            .cloned()
            .or_else(|| self.specs.get(&key).and_then(|s| s.default.clone()))
    }

    /// The typed value of a declared option (given, else default); `None` when the
    /// option has no value at all.
    pub fn get(&self, name: &str) -> Option<OptValue> {
        let key = canonical(name);
        let spec = self.specs.get(&key)?;
        let raw = self.given.get(&key).or(spec.default.as_ref())?;
        // Given values were validated by `set` and defaults are the declarer's
        // responsibility; a default that does not parse reads as absent.
        spec.parse(raw).ok()
    }

    /// Validates every given value against its declaration (after late declarations).
    pub fn validate(&self) -> Result<(), OptionError> {
        for (key, raw) in &self.given {
            if let Some(spec) = self.specs.get(key) {
                spec.parse(raw)?;
            }
        }
        Ok(())
    }

    /// Integer value, or `default` when unset.
    pub fn int(&self, name: &str, default: i64) -> i64 {
        self.get(name).and_then(|v| v.as_i64()).unwrap_or(default)
    }

    /// Float value, or `default` when unset.
    pub fn double(&self, name: &str, default: f64) -> f64 {
        self.get(name).and_then(|v| v.as_f64()).unwrap_or(default)
    }

    /// Boolean value, `false` when unset.
    pub fn flag(&self, name: &str) -> bool {
        self.get(name).map(|v| v.as_bool()).unwrap_or(false)
    }

    /// String value (lists joined by commas), or `None`.
    pub fn string(&self, name: &str) -> Option<String> {
        match self.get(name)? {
            OptValue::Str(s) => Some(s),
            other => Some(other.to_string()),
        }
    }

    /// List value (a string option is split on commas), empty when unset.
    pub fn list(&self, name: &str) -> Vec<String> {
        match self.get(name) {
            Some(OptValue::List(l)) => l,
            Some(OptValue::Str(s)) => parse_list(&s),
            Some(other) => vec![other.to_string()],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_use_powers_of_1024() {
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("64K"), Some(65536));
        assert_eq!(parse_size("16384"), Some(16384));
        assert_eq!(parse_size("1t"), Some(1 << 40));
        assert_eq!(parse_size("x"), None);
        assert_eq!(format_size(65536), "64K");
        assert_eq!(format_size(1000), "1000");
    }

    #[test]
    fn booleans_accept_every_spelling() {
        for t in ["on", "TRUE", "yes", "1"] {
            assert_eq!(parse_bool(t), Some(true));
        }
        for f in ["off", "false", "No", "0"] {
            assert_eq!(parse_bool(f), Some(false));
        }
        assert_eq!(parse_bool("maybe"), None);
    }

    #[test]
    fn bad_values_name_option_value_and_allowed() {
        let spec = OptSpec::new("threads", OptKind::Int, Some("1"), "x").with_range(1.0, 1e6);
        let err = spec.parse("abc").unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid value 'abc' for option --threads: expected an integer from 1 to 1000000"
        );
        let err = spec.parse("0").unwrap_err().to_string();
        assert!(
            err.contains("'0'") && err.contains("from 1 to 1000000"),
            "{err}"
        );
        let spec = OptSpec::new("mode", OptKind::String, None, "x").with_choices(&["a", "b"]);
        assert!(spec.parse("A").is_ok());
        assert_eq!(
            spec.parse("c").unwrap_err().to_string(),
            "invalid value 'c' for option --mode: expected one of: a, b"
        );
    }

    fn spec(kind: OptKind) -> OptSpec {
        OptSpec::new("opt", kind, None, "")
    }

    #[test]
    fn kind_bool() {
        let b = spec(OptKind::Bool);
        assert_eq!(b.parse("Yes"), Ok(OptValue::Bool(true)));
        assert_eq!(b.parse(" off "), Ok(OptValue::Bool(false)));
        // The empty string is no boolean: the one meaning for every option.
        assert!(b.parse("").is_err());
        assert!(b.parse("2").is_err());
    }

    #[test]
    fn kind_int() {
        let i = spec(OptKind::Int).with_range(-5.0, 5.0);
        assert_eq!(i.parse("-5"), Ok(OptValue::Int(-5)));
        assert_eq!(i.parse(" 5 "), Ok(OptValue::Int(5)));
        for bad in ["6", "1.5", "1e2", "", "99999999999999999999", "nan"] {
            assert!(i.parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            spec(OptKind::Int).parse("9223372036854775807"),
            Ok(OptValue::Int(i64::MAX))
        );
    }

    #[test]
    fn kind_size() {
        let z = spec(OptKind::Size).with_range(1024.0, (1u64 << 30) as f64);
        assert_eq!(z.parse("64K"), Ok(OptValue::Size(65536)));
        assert_eq!(z.parse("1G"), Ok(OptValue::Size(1 << 30)));
        for bad in ["1023", "2G", "99999999999T", "K", "-1K", ""] {
            assert!(z.parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn kind_double() {
        let d = spec(OptKind::Double).with_range(0.0, 10.0);
        assert_eq!(d.parse("2.5"), Ok(OptValue::Double(2.5)));
        for bad in ["inf", "-inf", "nan", "1e308", "10.01", "-0.5", "x", ""] {
            assert!(d.parse(bad).is_err(), "{bad}");
        }
        // 0 or the range: values near 0 are errors, 0 itself is "off".
        let p = spec(OptKind::Double).with_range_or_zero(1.0, 100.0);
        assert_eq!(p.parse("0"), Ok(OptValue::Double(0.0)));
        assert_eq!(p.parse("100"), Ok(OptValue::Double(100.0)));
        let err = p.parse("0.0000001").unwrap_err().to_string();
        assert!(
            err.ends_with("expected a value from 1 to 100, or 0"),
            "{err}"
        );
    }

    #[test]
    fn kind_string_and_file() {
        let s = spec(OptKind::String);
        assert_eq!(s.parse(""), Ok(OptValue::Str(String::new())));
        let f = spec(OptKind::File);
        assert_eq!(f.parse("/tmp/x"), Ok(OptValue::Str("/tmp/x".into())));
        let c = spec(OptKind::String).with_choices(&["auto", "off"]);
        assert!(c.parse("AUTO").is_ok());
        assert!(c.parse("on").is_err());
    }

    #[test]
    fn kind_list() {
        let l = spec(OptKind::List);
        assert_eq!(
            l.parse("a, b"),
            Ok(OptValue::List(vec!["a".into(), "b".into()]))
        );
        assert_eq!(l.parse(""), Ok(OptValue::List(Vec::new())));
        // A list with a range is a list of integers, each in the range.
        let ports = spec(OptKind::List).with_range(1.0, 65535.0);
        assert!(ports.parse("3306,3307").is_ok());
        for bad in ["0", "3306,65536", "3306,x", "1.5"] {
            let err = ports.parse(bad).unwrap_err().to_string();
            assert!(err.contains("integers from 1 to 65535"), "{err}");
        }
    }

    #[test]
    fn dash_and_underscore_are_the_same() {
        let mut set = OptionSet::new();
        set.declare([OptSpec::new("table-size", OptKind::Int, Some("10000"), "")]);
        set.set("table_size", "5").unwrap();
        assert_eq!(set.int("table-size", 0), 5);
        assert!(set.is_declared("table_size"));
    }
}
