//! What a statement asks for, decided from its text alone: a command that changes no
//! rows (`BEGIN`, `SET`, `CREATE ...`), a write that reports affected rows, or a result
//! set whose columns are known from the select list and whose row count follows from
//! the `WHERE` clause (`id BETWEEN a AND b` gives `b - a + 1` rows, `IN (...)` one per
//! item, anything else one). Nothing is stored: the answer to a point select is a row
//! of fixed values, as well-formed as a real server's.
//!
//! Both wire protocols share this analysis; they differ only in how the columns and
//! values are encoded (`mysql::results`, `pgsql::results`). A prepared statement is
//! analysed once, when it is prepared; its parameters fill in the row count and row ids
//! at each execution.

/// The `c` column of the OLTP tables: 119 characters, as the workloads make them.
pub const C_VALUE: &str = "51020374218-92736482013-44850197326-10938475621-76302918465-\
                           20485736192-63819204756-30174659281-84736152093-29504817365";
/// The `pad` column: 59 characters.
pub const PAD_VALUE: &str = "70493821657-18274635092-95028173640-42619370584-61837405926";
/// Most rows a range answers with, whatever its bounds say.
pub const MAX_ROWS: u64 = 10_000;

/// Facts about the session that some answers show (`SELECT VERSION()`, `DATABASE()`).
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The server version string.
    pub version: &'a str,
    /// The database the client asked for.
    pub database: &'a str,
    /// The user the client logged in as.
    pub user: &'a str,
    /// The connection's id.
    pub connection_id: u32,
    /// Which protocol asks: it decides how a few things are named and typed.
    pub dialect: Dialect,
}

/// The SQL dialect of the protocol being answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// MySQL/MariaDB: `?` parameters, `@@variables`, `SHOW VARIABLES`.
    Mysql,
    /// PostgreSQL: `$n` parameters, `SHOW name`.
    Pgsql,
}

/// The type of a result column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColType {
    /// 32-bit integer (`INT`, `int4`).
    Int,
    /// 64-bit integer (`BIGINT`, `int8`): `COUNT(*)`, integer literals.
    BigInt,
    /// An exact sum (`SUM(k)`): `DECIMAL` on MySQL, `int8` on PostgreSQL (as each
    /// server types the sum of an integer column).
    Sum,
    /// Fixed-width text (`CHAR(n)`, `bpchar`).
    Char(u32),
    /// Variable-width text (`VARCHAR`, `text`).
    Text,
}

/// Where a column's value in each row comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// The row's id: the range's lower bound plus the row's index.
    RowId,
    /// The sum of the ids of the range.
    SumOfIds,
    /// The number of rows of the range.
    CountOfIds,
    /// A fixed integer.
    Int(i64),
    /// A fixed text.
    Text(Box<str>),
    /// SQL NULL.
    Null,
}

impl Cell {
    /// The value in row `i` of `e` when it is an integer.
    pub fn int_at(&self, i: u64, e: &Extent) -> Option<i64> {
        let ids = e.ids as i64;
        match self {
            Cell::RowId => Some(e.first_id.wrapping_add(i as i64)),
            Cell::SumOfIds => Some(
                ids.wrapping_mul(e.first_id)
                    .wrapping_add(ids.wrapping_mul(ids - 1) / 2),
            ),
            Cell::CountOfIds => Some(ids),
            Cell::Int(v) => Some(*v),
            _ => None,
        }
    }
}

/// Appends an integer in decimal, as both protocols' text formats write numbers.
pub fn put_decimal(b: &mut Vec<u8>, v: i64) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        b.push(b'-');
    }
    b.extend_from_slice(&digits[at..]);
}

/// One result column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The name the client sees.
    pub name: Box<str>,
    /// Its type.
    pub ty: ColType,
    /// Its value in each row.
    pub cell: Cell,
}

/// A bound of a range: a parameter (by 0-based index) or a literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// The value of parameter `n`.
    Param(usize),
    /// A literal integer.
    Lit(i64),
}

/// How many rows a result set has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    /// One row (a point select, an aggregate, a select without `FROM`).
    One,
    /// `id BETWEEN lo AND hi`: one row per id.
    Range(Operand, Operand),
    /// `IN (...)` with this many items.
    List(u64),
    /// No rows (`SHOW WARNINGS`).
    Zero,
}

/// The kind of command, for PostgreSQL's command tag and MySQL's status flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `SELECT` / `SHOW`: a result set.
    Select,
    /// `INSERT`.
    Insert,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `BEGIN` / `START TRANSACTION`.
    Begin,
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK`.
    Rollback,
    /// Anything else (`SET`, `CREATE TABLE`, `USE`, ...): done, no rows.
    Other,
}

/// What answering a statement takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The command.
    pub verb: Verb,
    /// PostgreSQL's command tag for commands other than SELECT/INSERT/UPDATE/DELETE
    /// (`BEGIN`, `SET`, `CREATE TABLE`).
    pub tag: Box<str>,
    /// Result columns (empty for a command without a result set).
    pub columns: Vec<Column>,
    /// Rows of the result set, or rows a write affects.
    pub rows: Rows,
    /// Number of parameters (`?` or the highest `$n`).
    pub params: usize,
    /// For each parameter, whether it is compared with a text column (PostgreSQL's
    /// parameter description types it `bpchar` rather than `int4`).
    pub text_params: Vec<bool>,
    /// True for the empty statement (only comments or blanks).
    pub empty: bool,
    /// An aggregate (`SUM(k)`): one row, whose value sums the range [`Statement::rows`].
    pub aggregate: bool,
}

/// The rows one execution of a statement answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// Rows in the result set (or affected by a write).
    pub rows: u64,
    /// Id of the first row of the range.
    pub first_id: i64,
    /// Ids in the range (differs from `rows` for an aggregate).
    pub ids: u64,
}

impl Statement {
    /// True when the answer is a result set.
    pub fn has_rows(&self) -> bool {
        !self.columns.is_empty()
    }

    /// The rows of one execution with these parameter values (`param(i)` is parameter
    /// `i` as an integer, `None` when it is NULL or not a number).
    pub fn extent(&self, param: &dyn Fn(usize) -> Option<i64>) -> Extent {
        let value = |o: Operand| match o {
            Operand::Param(i) => param(i),
            Operand::Lit(v) => Some(v),
        };
        let (ids, first_id) = match self.rows {
            Rows::Zero => (0, 1),
            Rows::One => (1, value(Operand::Param(0)).unwrap_or(1)),
            Rows::List(n) => (n.min(MAX_ROWS), 1),
            Rows::Range(lo, hi) => match (value(lo), value(hi)) {
                (Some(lo), Some(hi)) if hi >= lo => {
                    let n = (hi as i128 - lo as i128 + 1).min(MAX_ROWS as i128) as u64;
                    (n, lo)
                }
                _ => (0, 1),
            },
        };
        Extent {
            rows: if self.aggregate { 1 } else { ids },
            first_id,
            ids,
        }
    }
}

/// A token of SQL text.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A keyword or identifier (quoted identifiers unquoted), as written.
    Word(String),
    /// `@@name` (scope prefixes kept).
    Var(String),
    /// An integer literal.
    Num(i64),
    /// Any other number (`1.5`, `1e3`).
    Decimal(String),
    /// A string literal, unescaped.
    Str(String),
    /// A parameter, 0-based.
    Param(usize),
    /// One punctuation character.
    Punct(u8),
}

impl Tok {
    fn is_word(&self, w: &str) -> bool {
        matches!(self, Tok::Word(x) if x.eq_ignore_ascii_case(w))
    }
}

/// Splits SQL text into tokens, skipping blanks and comments. `?` parameters are
/// numbered in order; `$n` is parameter `n - 1`.
fn tokens(sql: &str) -> Vec<Tok> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut next_param = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\r' | b'\n' | b'\x0c' => i += 1,
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i = (i + 2).min(b.len());
            }
            b'\'' | b'"' | b'`' => {
                let quote = c;
                let mut s = Vec::new();
                i += 1;
                while i < b.len() {
                    if b[i] == quote {
                        if b.get(i + 1) == Some(&quote) {
                            s.push(quote);
                            i += 2;
                            continue;
                        }
                        i += 1;
                        break;
                    }
                    if b[i] == b'\\' && quote == b'\'' && i + 1 < b.len() {
                        s.push(b[i + 1]);
                        i += 2;
                        continue;
                    }
                    s.push(b[i]);
                    i += 1;
                }
                let s = String::from_utf8_lossy(&s).into_owned();
                out.push(if quote == b'\'' {
                    Tok::Str(s)
                } else {
                    Tok::Word(s)
                });
            }
            b'?' => {
                out.push(Tok::Param(next_param));
                next_param += 1;
                i += 1;
            }
            b'$' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let start = i + 1;
                i = start;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
                let n: usize = sql[start..i].parse().unwrap_or(1);
                out.push(Tok::Param(n.saturating_sub(1)));
            }
            b'@' if b.get(i + 1) == Some(&b'@') => {
                let start = i + 2;
                i = start;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.')
                {
                    i += 1;
                }
                out.push(Tok::Var(sql[start..i].to_string()));
            }
            b'0'..=b'9' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                let text = &sql[start..i];
                out.push(match text.parse::<i64>() {
                    Ok(v) => Tok::Num(v),
                    Err(_) => Tok::Decimal(text.to_string()),
                });
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                out.push(Tok::Word(sql[start..i].to_string()));
            }
            _ => {
                out.push(Tok::Punct(c));
                i += 1;
            }
        }
    }
    out
}

/// Analyses one statement (no `;`-separated list: see [`split`]).
pub fn analyse(sql: &str, ctx: &Context<'_>) -> Statement {
    let toks = tokens(sql);
    let params = toks
        .iter()
        .filter_map(|t| match t {
            Tok::Param(i) => Some(i + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut st = Statement {
        verb: Verb::Other,
        tag: "".into(),
        columns: Vec::new(),
        rows: Rows::One,
        params,
        text_params: text_params(&toks, params),
        empty: toks.is_empty(),
        aggregate: false,
    };
    let Some(Tok::Word(first)) = toks.first() else {
        return st;
    };
    let first = first.to_ascii_uppercase();
    match first.as_str() {
        "SELECT" | "VALUES" | "WITH" => {
            st.verb = Verb::Select;
            st.tag = "SELECT".into();
            select(&toks, ctx, &mut st);
        }
        "SHOW" => {
            st.verb = Verb::Select;
            st.tag = "SHOW".into();
            show(&toks, ctx, &mut st);
        }
        "INSERT" | "REPLACE" => {
            st.verb = Verb::Insert;
            st.rows = Rows::List(insert_rows(&toks));
        }
        "UPDATE" | "DELETE" => {
            st.verb = if first == "UPDATE" {
                Verb::Update
            } else {
                Verb::Delete
            };
            st.rows = where_rows(&toks);
        }
        "BEGIN" | "START" => {
            st.verb = Verb::Begin;
            st.tag = "BEGIN".into();
        }
        "COMMIT" | "END" => {
            st.verb = Verb::Commit;
            st.tag = "COMMIT".into();
        }
        "ROLLBACK" | "ABORT" => {
            st.verb = Verb::Rollback;
            st.tag = "ROLLBACK".into();
        }
        _ => {
            st.tag = match (&toks[..], first.as_str()) {
                ([_, Tok::Word(second), ..], "CREATE" | "DROP" | "ALTER" | "TRUNCATE") => {
                    format!("{first} {}", second.to_ascii_uppercase()).into()
                }
                _ => first.into(),
            };
        }
    }
    st
}

/// Splits a text query into statements at top-level `;` (outside quotes and comments),
/// dropping empty ones; a query of only blanks gives one empty statement.
pub fn split(sql: &str) -> Vec<&str> {
    let b = sql.as_bytes();
    let mut parts = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"' | b'`') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' && q == b'\'' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b';' => {
                parts.push(&sql[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    parts.push(&sql[start.min(sql.len())..]);
    let kept: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !tokens(p).is_empty())
        .collect();
    if kept.is_empty() {
        vec![sql]
    } else {
        kept
    }
}

/// Marks parameters compared with (or inserted into) the text columns `c` and `pad`.
fn text_params(toks: &[Tok], params: usize) -> Vec<bool> {
    let mut text = vec![false; params];
    let is_text_col = |t: &Tok| t.is_word("c") || t.is_word("pad");
    for (i, t) in toks.iter().enumerate() {
        if let Tok::Param(p) = t {
            if i >= 2 && toks[i - 1] == Tok::Punct(b'=') && is_text_col(&toks[i - 2]) {
                text[*p] = true;
            }
        }
    }
    // INSERT INTO t (a, b, ...) VALUES (?, ?, ...): parameters take their column's kind.
    if let Some(open) = toks.iter().position(|t| *t == Tok::Punct(b'(')) {
        if let Some(values) = toks.iter().position(|t| t.is_word("VALUES")) {
            if open < values && toks.first().is_some_and(|t| t.is_word("INSERT")) {
                let cols: Vec<&Tok> = toks[open + 1..values]
                    .iter()
                    .filter(|t| matches!(t, Tok::Word(_)))
                    .collect();
                let mut col = 0;
                for t in &toks[values + 1..] {
                    match t {
                        Tok::Punct(b'(') => col = 0,
                        Tok::Punct(b',') => col += 1,
                        Tok::Param(p) if cols.get(col).is_some_and(|c| is_text_col(c)) => {
                            text[*p] = true;
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    text
}

/// Rows an INSERT writes: one per parenthesised tuple after `VALUES`.
fn insert_rows(toks: &[Tok]) -> u64 {
    let Some(values) = toks.iter().position(|t| t.is_word("VALUES")) else {
        return 1;
    };
    let mut depth = 0;
    let mut tuples = 0;
    for t in &toks[values + 1..] {
        match t {
            Tok::Punct(b'(') => {
                if depth == 0 {
                    tuples += 1;
                }
                depth += 1;
            }
            Tok::Punct(b')') => depth -= 1,
            _ => {}
        }
    }
    tuples.max(1)
}

/// Rows a `WHERE` clause selects: a `BETWEEN` range, an `IN` list, else one.
fn where_rows(toks: &[Tok]) -> Rows {
    let Some(w) = toks.iter().position(|t| t.is_word("WHERE")) else {
        return Rows::One;
    };
    let rest = &toks[w + 1..];
    let operand = |t: Option<&Tok>| match t {
        Some(Tok::Param(p)) => Some(Operand::Param(*p)),
        Some(Tok::Num(v)) => Some(Operand::Lit(*v)),
        _ => None,
    };
    for (i, t) in rest.iter().enumerate() {
        if t.is_word("BETWEEN") {
            let lo = operand(rest.get(i + 1));
            let hi = operand(rest.get(i + 3));
            if let (Some(lo), Some(hi), true) =
                (lo, hi, rest.get(i + 2).is_some_and(|t| t.is_word("AND")))
            {
                return Rows::Range(lo, hi);
            }
        }
        if t.is_word("IN") && rest.get(i + 1) == Some(&Tok::Punct(b'(')) {
            let items = rest[i + 2..]
                .iter()
                .take_while(|t| **t != Tok::Punct(b')'))
                .filter(|t| **t == Tok::Punct(b','))
                .count() as u64
                + 1;
            return Rows::List(items);
        }
        if *t == Tok::Punct(b'=') {
            if let Some(Operand::Param(p)) = operand(rest.get(i + 1)) {
                // A point select's row id is its parameter.
                return if p == 0 { Rows::One } else { Rows::List(1) };
            }
        }
    }
    Rows::One
}

/// The select list and row count of a `SELECT`.
fn select(toks: &[Tok], ctx: &Context<'_>, st: &mut Statement) {
    let from = top_level_word(toks, "FROM");
    let end = from.unwrap_or_else(|| {
        ["WHERE", "ORDER", "GROUP", "LIMIT", "UNION"]
            .iter()
            .filter_map(|w| top_level_word(toks, w))
            .min()
            .unwrap_or(toks.len())
    });
    let mut start = 1;
    while toks
        .get(start)
        .is_some_and(|t| t.is_word("DISTINCT") || t.is_word("ALL"))
    {
        start += 1;
    }
    let list = &toks[start.min(end)..end];
    let mut aggregate = false;
    for item in split_items(list) {
        let (col, agg) = select_item(item, ctx);
        aggregate |= agg;
        st.columns.extend(col);
    }
    if st.columns.is_empty() {
        st.columns.push(Column {
            name: "?column?".into(),
            ty: ColType::Text,
            cell: Cell::Null,
        });
    }
    st.rows = if from.is_none() {
        Rows::One
    } else {
        where_rows(toks)
    };
    // An aggregate answers one row; its value still follows from the range.
    st.aggregate = aggregate;
}

/// Index of `word` outside parentheses, if any.
fn top_level_word(toks: &[Tok], word: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => depth -= 1,
            t if depth == 0 && t.is_word(word) => return Some(i),
            _ => {}
        }
    }
    None
}

/// Splits a select list at top-level commas.
fn split_items(list: &[Tok]) -> Vec<&[Tok]> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, t) in list.iter().enumerate() {
        match t {
            Tok::Punct(b'(') => depth += 1,
            Tok::Punct(b')') => depth -= 1,
            Tok::Punct(b',') if depth == 0 => {
                items.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < list.len() {
        items.push(&list[start..]);
    }
    items
}

/// The column(s) one select-list item makes, and whether it is an aggregate.
fn select_item(item: &[Tok], s: &Context<'_>) -> (Vec<Column>, bool) {
    // `expr AS alias` or `expr alias`.
    let (expr, alias) = match item {
        [e @ .., as_, Tok::Word(a)] if as_.is_word("AS") => (e, Some(a.clone())),
        [e @ .., Tok::Punct(b')') | Tok::Word(_) | Tok::Var(_), Tok::Word(a)]
            if !e.is_empty() && !a.contains('.') =>
        {
            (&item[..item.len() - 1], Some(a.clone()))
        }
        _ => (item, None),
    };
    let text = render(expr);
    let col = |name: &str, ty, cell| Column {
        name: alias.clone().unwrap_or_else(|| name.to_string()).into(),
        ty,
        cell,
    };
    let pg = s.dialect == Dialect::Pgsql;
    let column = match expr {
        [Tok::Punct(b'*')] => {
            return (
                vec![
                    col("id", ColType::Int, Cell::RowId),
                    col("k", ColType::Int, Cell::RowId),
                    col("c", ColType::Char(120), Cell::Text(C_VALUE.into())),
                    col("pad", ColType::Char(60), Cell::Text(PAD_VALUE.into())),
                ],
                false,
            )
        }
        [Tok::Word(w)] | [Tok::Word(_), Tok::Punct(b'.'), Tok::Word(w)] => {
            match w.to_ascii_lowercase().as_str() {
                "id" | "k" => col(w, ColType::Int, Cell::RowId),
                "c" => col(w, ColType::Char(120), Cell::Text(C_VALUE.into())),
                "pad" => col(w, ColType::Char(60), Cell::Text(PAD_VALUE.into())),
                "current_user" | "session_user" | "user" => {
                    col(w, ColType::Text, Cell::Text(s.user.into()))
                }
                "current_timestamp" | "now" => {
                    col(w, ColType::Text, Cell::Text("2026-01-01 00:00:00".into()))
                }
                _ => col(w, ColType::Text, Cell::Text("".into())),
            }
        }
        [Tok::Var(v)] => {
            let name = v.rsplit('.').next().unwrap_or(v);
            let ty = match variable(name, s) {
                Cell::Int(_) => ColType::BigInt,
                _ => ColType::Text,
            };
            col(&format!("@@{v}"), ty, variable(name, s))
        }
        [Tok::Num(v)] => col(
            if pg { "?column?" } else { &text },
            if pg && i32::try_from(*v).is_ok() {
                ColType::Int
            } else {
                ColType::BigInt
            },
            Cell::Int(*v),
        ),
        [Tok::Punct(b'-'), Tok::Num(v)] => col(
            if pg { "?column?" } else { &text },
            ColType::BigInt,
            Cell::Int(-v),
        ),
        [Tok::Str(v)] => col(
            if pg { "?column?" } else { v },
            ColType::Text,
            Cell::Text(v.as_str().into()),
        ),
        [Tok::Word(f), Tok::Punct(b'('), ..] => {
            let lower = f.to_ascii_lowercase();
            let name = if pg { lower.as_str() } else { text.as_str() };
            match lower.as_str() {
                "sum" => return (vec![col(name, ColType::Sum, Cell::SumOfIds)], true),
                "count" => return (vec![col(name, ColType::BigInt, Cell::CountOfIds)], true),
                "min" | "max" | "avg" => return (vec![col(name, ColType::Int, Cell::RowId)], true),
                "version" => col(name, ColType::Text, Cell::Text(s.version.into())),
                "database" | "current_database" | "schema" | "current_schema" => {
                    col(name, ColType::Text, Cell::Text(s.database.into()))
                }
                "user" | "current_user" | "session_user" | "system_user" => {
                    col(name, ColType::Text, Cell::Text(s.user.into()))
                }
                "connection_id" | "pg_backend_pid" => {
                    col(name, ColType::BigInt, Cell::Int(i64::from(s.connection_id)))
                }
                "now" | "current_timestamp" | "sysdate" => col(
                    name,
                    ColType::Text,
                    Cell::Text("2026-01-01 00:00:00".into()),
                ),
                _ => col(name, ColType::Text, Cell::Null),
            }
        }
        _ => col(
            if pg { "?column?" } else { &text },
            ColType::Text,
            Cell::Null,
        ),
    };
    (vec![column], false)
}

/// SQL text of tokens, for column names (`COUNT(*)`, `@@version`).
fn render(toks: &[Tok]) -> String {
    let mut s = String::new();
    for t in toks {
        match t {
            Tok::Word(w) => {
                if s.ends_with(|c: char| c.is_alphanumeric() || c == '_') {
                    s.push(' ');
                }
                s.push_str(w);
            }
            Tok::Var(v) => {
                s.push_str("@@");
                s.push_str(v);
            }
            Tok::Num(n) => s.push_str(&n.to_string()),
            Tok::Decimal(d) => s.push_str(d),
            Tok::Str(v) => s.push_str(v),
            Tok::Param(_) => s.push('?'),
            Tok::Punct(p) => s.push(*p as char),
        }
    }
    s
}

/// A server variable's value (`@@name`, `SHOW VARIABLES`, PostgreSQL's `SHOW name`).
/// Unknown names read as the empty string.
pub fn variable(name: &str, s: &Context<'_>) -> Cell {
    let name = name.to_ascii_lowercase();
    let int = |v: i64| Cell::Int(v);
    let text = |v: &str| Cell::Text(v.into());
    match name.as_str() {
        "max_allowed_packet" => int(64 << 20),
        "wait_timeout" | "interactive_timeout" => int(28800),
        "net_write_timeout" => int(60),
        "net_read_timeout" => int(30),
        "autocommit" => int(1),
        "max_connections" => int(100_000),
        "lower_case_table_names" | "sql_auto_is_null" => int(0),
        "auto_increment_increment" | "auto_increment_offset" => int(1),
        "innodb_buffer_pool_size" => int(128 << 20),
        "version" | "server_version" => text(s.version),
        "version_comment" => text("bmk null server"),
        "sql_mode" => text("STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION"),
        "tx_isolation" | "transaction_isolation" => {
            if s.dialect == Dialect::Pgsql {
                text("read committed")
            } else {
                text("REPEATABLE-READ")
            }
        }
        "character_set_client"
        | "character_set_connection"
        | "character_set_results"
        | "character_set_server"
        | "character_set_database" => text("utf8mb4"),
        "collation_connection" | "collation_server" | "collation_database" => {
            text("utf8mb4_general_ci")
        }
        "time_zone" => text("SYSTEM"),
        "system_time_zone" | "timezone" => text("UTC"),
        "server_encoding" | "client_encoding" => text("UTF8"),
        "standard_conforming_strings" | "integer_datetimes" => text("on"),
        "datestyle" => text("ISO, MDY"),
        "hostname" => text("localhost"),
        "port" => int(0),
        _ => text(""),
    }
}

/// Names `SHOW VARIABLES` lists.
const SHOWN_VARIABLES: &[&str] = &[
    "autocommit",
    "character_set_client",
    "character_set_connection",
    "character_set_results",
    "character_set_server",
    "collation_connection",
    "collation_server",
    "innodb_buffer_pool_size",
    "interactive_timeout",
    "lower_case_table_names",
    "max_allowed_packet",
    "max_connections",
    "net_read_timeout",
    "net_write_timeout",
    "sql_mode",
    "system_time_zone",
    "time_zone",
    "transaction_isolation",
    "tx_isolation",
    "version",
    "version_comment",
    "wait_timeout",
];

/// `SHOW ...`: PostgreSQL's `SHOW name` (one column named after the setting), MySQL's
/// `SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'pattern']` (name/value rows); anything else
/// an empty two-column result.
fn show(toks: &[Tok], s: &Context<'_>, st: &mut Statement) {
    let text_col = |name: &str, cell: Cell| Column {
        name: name.into(),
        ty: ColType::Text,
        cell,
    };
    if s.dialect == Dialect::Pgsql {
        if let Some(Tok::Word(name)) = toks.get(1) {
            let value = match variable(name, s) {
                Cell::Int(v) => v.to_string(),
                Cell::Text(t) => t.into_string(),
                _ => String::new(),
            };
            st.columns.push(text_col(name, Cell::Text(value.into())));
            st.rows = Rows::One;
            return;
        }
    }
    let vars = toks.iter().position(|t| t.is_word("VARIABLES"));
    st.columns.push(text_col("Variable_name", Cell::Null));
    st.columns.push(text_col("Value", Cell::Null));
    st.rows = Rows::Zero;
    if vars.is_some() {
        let pattern =
            toks.iter()
                .position(|t| t.is_word("LIKE"))
                .and_then(|i| match toks.get(i + 1) {
                    Some(Tok::Str(p)) => Some(p.to_ascii_lowercase()),
                    _ => None,
                });
        let names: Vec<&str> = SHOWN_VARIABLES
            .iter()
            .copied()
            .filter(|n| pattern.as_deref().is_none_or(|p| like(p, n)))
            .collect();
        // Several rows of different values: one statement per shown variable would be
        // needed to describe them with this row model, so SHOW VARIABLES answers with
        // the first match (clients ask for one variable at a time).
        if let Some(name) = names.first() {
            let value = match variable(name, s) {
                Cell::Int(v) => v.to_string(),
                Cell::Text(t) => t.into_string(),
                _ => String::new(),
            };
            st.columns[0].cell = Cell::Text((*name).into());
            st.columns[1].cell = Cell::Text(value.into());
            st.rows = Rows::One;
        }
    }
}

/// SQL `LIKE` with `%` and `_` (lower-case pattern and name).
fn like(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match p.split_first() {
            None => n.is_empty(),
            Some((b'%', rest)) => (0..=n.len()).any(|i| go(rest, &n[i..])),
            Some((b'_', rest)) => !n.is_empty() && go(rest, &n[1..]),
            Some((b'\\', rest)) if !rest.is_empty() => {
                n.first() == rest.first() && go(&rest[1..], &n[1..])
            }
            Some((c, rest)) => n.first() == Some(c) && go(rest, &n[1..]),
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn my(sql: &str) -> Statement {
        analyse(
            sql,
            &Context {
                version: "8.0.0",
                database: "sbtest",
                user: "u",
                connection_id: 7,
                dialect: Dialect::Mysql,
            },
        )
    }

    fn pg(sql: &str) -> Statement {
        analyse(
            sql,
            &Context {
                version: "15.0",
                database: "sbtest",
                user: "u",
                connection_id: 7,
                dialect: Dialect::Pgsql,
            },
        )
    }

    #[test]
    fn oltp_selects_have_their_columns_and_row_counts() {
        let p = my("SELECT c FROM sbtest1 WHERE id=?");
        assert_eq!(p.params, 1);
        assert_eq!(p.columns.len(), 1);
        assert_eq!(p.columns[0].ty, ColType::Char(120));
        assert_eq!(p.extent(&|_| Some(42)).rows, 1);
        assert_eq!(p.extent(&|_| Some(42)).first_id, 42);
        let r = my("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
        let e = r.extent(&|i| Some(if i == 0 { 10 } else { 109 }));
        assert_eq!((e.rows, e.first_id), (100, 10));
        let s = pg("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN $1 AND $2");
        assert_eq!(s.columns[0].ty, ColType::Sum);
        assert_eq!(s.columns[0].name.as_ref(), "sum");
        let e = s.extent(&|i| Some(if i == 0 { 1 } else { 100 }));
        assert_eq!((e.rows, e.ids), (1, 100));
        let d = my("SELECT DISTINCT c FROM sbtest3 WHERE id BETWEEN 5 AND 14 ORDER BY c");
        assert_eq!(d.params, 0);
        assert_eq!(d.extent(&|_| None).rows, 10);
        assert_eq!(d.extent(&|_| None).first_id, 5);
        let backwards = my("SELECT c FROM t WHERE id BETWEEN 9 AND 1");
        assert_eq!(backwards.extent(&|_| None).rows, 0);
    }

    #[test]
    fn writes_report_affected_rows_and_text_parameters() {
        let u = pg("UPDATE sbtest1 SET c=$1 WHERE id=$2");
        assert_eq!(u.verb, Verb::Update);
        assert_eq!(u.text_params, vec![true, false]);
        assert_eq!(u.extent(&|_| Some(3)).rows, 1);
        let i = my("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)");
        assert_eq!(i.verb, Verb::Insert);
        assert_eq!(i.text_params, vec![false, false, true, true]);
        assert_eq!(i.rows, Rows::List(1));
        let multi = my("INSERT INTO t VALUES (1,'a'),(2,'b'),(3,'c')");
        assert_eq!(multi.rows, Rows::List(3));
        assert_eq!(my("DELETE FROM sbtest1 WHERE id=?").verb, Verb::Delete);
        assert!(!my("DELETE FROM sbtest1 WHERE id=?").has_rows());
    }

    #[test]
    fn session_statements_and_variables() {
        let v = my("SELECT @@max_allowed_packet");
        assert_eq!(v.columns[0].name.as_ref(), "@@max_allowed_packet");
        assert_eq!(v.columns[0].cell, Cell::Int(64 << 20));
        let two = my("select @@session.auto_increment_increment AS a, @@version_comment");
        assert_eq!(two.columns.len(), 2);
        assert_eq!(two.columns[0].name.as_ref(), "a");
        assert_eq!(my("SET NAMES utf8mb4").verb, Verb::Other);
        assert_eq!(pg("BEGIN").tag.as_ref(), "BEGIN");
        assert_eq!(my("START TRANSACTION").verb, Verb::Begin);
        assert_eq!(pg("CREATE TABLE t (id int)").tag.as_ref(), "CREATE TABLE");
        let one = pg("SELECT 1");
        assert_eq!(one.columns[0].name.as_ref(), "?column?");
        assert_eq!(one.columns[0].cell, Cell::Int(1));
        assert_eq!(my("select 1").columns[0].name.as_ref(), "1");
        let ver = pg("select version()");
        assert_eq!(ver.columns[0].cell, Cell::Text("15.0".into()));
        let sv = my("SHOW VARIABLES LIKE 'max_allowed%'");
        assert_eq!(sv.columns[1].cell, Cell::Text("67108864".into()));
        assert_eq!(
            pg("SHOW server_encoding").columns[0].cell,
            Cell::Text("UTF8".into())
        );
        assert!(my("  -- nothing\n").empty);
    }

    #[test]
    fn decimals_are_written_in_full() {
        for v in [0i64, 7, -7, 1234567890123, i64::MIN, i64::MAX] {
            let mut b = Vec::new();
            put_decimal(&mut b, v);
            assert_eq!(b, v.to_string().as_bytes());
        }
    }

    #[test]
    fn split_keeps_quoted_semicolons() {
        assert_eq!(
            split("BEGIN; SELECT ';' ; COMMIT;"),
            vec!["BEGIN", " SELECT ';' ", " COMMIT"]
        );
        assert_eq!(split(""), vec![""]);
    }
}
