//! Bind parameter types (`sysbench.sql.type`) and bind values.

/// The SQL parameter types of `sysbench.sql.type`, in sysbench's numbering
/// (`NONE` = 0 .. `VARCHAR` = 12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SqlType {
    /// `sysbench.sql.type.NONE`.
    None,
    /// `TINYINT`.
    TinyInt,
    /// `SMALLINT`.
    SmallInt,
    /// `INT`.
    Int,
    /// `BIGINT`.
    BigInt,
    /// `FLOAT`.
    Float,
    /// `DOUBLE`.
    Double,
    /// `TIME` (bound as text `HH:MM:SS`).
    Time,
    /// `DATE` (bound as text `YYYY-MM-DD`).
    Date,
    /// `DATETIME` (bound as text `YYYY-MM-DD HH:MM:SS`).
    DateTime,
    /// `TIMESTAMP` (bound as text `YYYY-MM-DD HH:MM:SS`).
    Timestamp,
    /// `CHAR`.
    Char,
    /// `VARCHAR`.
    VarChar,
}

impl SqlType {
    /// Every type, in sysbench's numbering order.
    pub const ALL: [SqlType; 13] = [
        SqlType::None,
        SqlType::TinyInt,
        SqlType::SmallInt,
        SqlType::Int,
        SqlType::BigInt,
        SqlType::Float,
        SqlType::Double,
        SqlType::Time,
        SqlType::Date,
        SqlType::DateTime,
        SqlType::Timestamp,
        SqlType::Char,
        SqlType::VarChar,
    ];

    /// The numeric code used in `sysbench.sql.type`.
    pub fn code(self) -> u32 {
        SqlType::ALL.iter().position(|t| *t == self).unwrap_or(0) as u32
    }

    /// The type for a `sysbench.sql.type` code.
    pub fn from_code(code: u32) -> Option<SqlType> {
        SqlType::ALL.get(code as usize).copied()
    }

    /// The upper-case name used as the key in `sysbench.sql.type`.
    pub fn name(self) -> &'static str {
        match self {
            SqlType::None => "NONE",
            SqlType::TinyInt => "TINYINT",
            SqlType::SmallInt => "SMALLINT",
            SqlType::Int => "INT",
            SqlType::BigInt => "BIGINT",
            SqlType::Float => "FLOAT",
            SqlType::Double => "DOUBLE",
            SqlType::Time => "TIME",
            SqlType::Date => "DATE",
            SqlType::DateTime => "DATETIME",
            SqlType::Timestamp => "TIMESTAMP",
            SqlType::Char => "CHAR",
            SqlType::VarChar => "VARCHAR",
        }
    }

    /// True for the integer types.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt
        )
    }

    /// True for `FLOAT` and `DOUBLE`.
    pub fn is_float(self) -> bool {
        matches!(self, SqlType::Float | SqlType::Double)
    }

    /// Build the bind value of this type from a textual value (what a Lua script passes
    /// to `param:set()` after `tostring`): integers and floats are parsed (falling back to
    /// text when they do not parse, so the server reports the problem), everything else
    /// stays text.
    pub fn value_from_text(self, text: &[u8]) -> Value {
        if self.is_integer() {
            if let Some(v) = std::str::from_utf8(text)
                .ok()
                .and_then(|s| s.trim().parse::<i64>().ok())
            {
                return Value::Int(v);
            }
        } else if self.is_float() {
            if let Some(v) = std::str::from_utf8(text)
                .ok()
                .and_then(|s| s.trim().parse::<f64>().ok())
            {
                return match self {
                    SqlType::Float => Value::Float(v as f32),
                    _ => Value::Double(v),
                };
            }
        }
        Value::Text(text.to_vec())
    }
}

/// A bound parameter value.
///
/// Temporal types (`TIME`, `DATE`, `DATETIME`, `TIMESTAMP`) are bound as [`Value::Text`]
/// in the server's literal format; all three servers convert them.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL `NULL`.
    Null,
    /// Any integer type.
    Int(i64),
    /// `FLOAT`.
    Float(f32),
    /// `DOUBLE`.
    Double(f64),
    /// Character data (bytes: Lua strings need not be UTF-8) and temporal values.
    Text(Vec<u8>),
}

impl From<i64> for Value {
    fn from(v: i64) -> Self {
        Value::Int(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Double(v)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.as_bytes().to_vec())
    }
}

impl From<Option<&str>> for Value {
    fn from(v: Option<&str>) -> Self {
        v.map_or(Value::Null, Value::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for t in SqlType::ALL {
            assert_eq!(SqlType::from_code(t.code()), Some(t));
        }
        assert_eq!(SqlType::VarChar.code(), 12);
        assert_eq!(SqlType::from_code(13), None);
    }

    #[test]
    fn value_from_text() {
        assert_eq!(SqlType::Int.value_from_text(b" 42"), Value::Int(42));
        assert_eq!(SqlType::Double.value_from_text(b"1.5"), Value::Double(1.5));
        assert_eq!(SqlType::Float.value_from_text(b"1.5"), Value::Float(1.5));
        assert_eq!(
            SqlType::Int.value_from_text(b"x"),
            Value::Text(b"x".to_vec())
        );
        assert_eq!(
            SqlType::Date.value_from_text(b"2020-01-02"),
            Value::Text(b"2020-01-02".to_vec())
        );
    }
}
