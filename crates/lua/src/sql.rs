//! The Rust half of `sysbench.sql` (spec 2 §5): drivers, connections, prepared
//! statements, bind parameters and result sets as Lua userdata over `bmk-sql`.
//!
//! The methods here never raise SQL errors themselves: they return `true, result` or
//! `false, errinfo` and the prelude's wrappers turn `errinfo` into what sysbench does
//! — a restartable `errdesc` table for ignorable errors, or the `FATAL:` lines and a
//! `SQL error, errno = N, ...` Lua error. Every statement that succeeds is classified
//! and counted as read, write or other on the calling worker; ignorable errors count
//! as ignored errors (or reconnects when the driver reconnected).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bmk_engine::{with_current, Counter};
use bmk_sql::{
    classify, Connection, Driver, DriverConfig, DriverKind, QueryKind, ResultSet, SqlError,
    SqlErrorKind, SqlType, StatementId, Value as SqlValue,
};
use mlua::{Lua, Table, UserData, UserDataFields, UserDataMethods, Value};

/// What the raw methods return: `(true, value)` or `(false, errinfo)`.
type Outcome = (bool, Value);

use crate::error::LuaError;
use crate::state::{ScriptEnv, StateData};

/// Connections made so far in the process: spreads them over hosts round-robin.
static CONNECTIONS: AtomicUsize = AtomicUsize::new(0);

/// Adds the Rust side of `sysbench.sql` to the prelude's `host` table.
pub(crate) fn install(lua: &Lua, host: &Table, _env: &ScriptEnv) -> Result<(), LuaError> {
    let raw = lua.create_table()?;
    raw.set(
        "driver",
        lua.create_function(|lua, name: Option<String>| {
            let options = lua
                .app_data_ref::<StateData>()
                .map(|d| d.options.clone())
                .unwrap_or_default();
            let name = name
                .or_else(|| options.raw("db-driver"))
                .unwrap_or_else(|| "mysql".to_string());
            let kind: DriverKind = match name.parse() {
                Ok(k) => k,
                Err(msg) => return Ok((Value::Nil, Some(msg))),
            };
            let get = |n: &str| options.raw(n);
            match DriverConfig::from_options(kind, &get) {
                Ok(cfg) => Ok((
                    Value::UserData(lua.create_userdata(LuaDriver {
                        driver: Driver::new(cfg),
                    })?),
                    None,
                )),
                Err(e) => Ok((Value::Nil, Some(e.message))),
            }
        })?,
    )?;
    host.set("sql_raw", raw)?;
    Ok(())
}

#[inline]
fn count(kind: QueryKind) {
    let c = match kind {
        QueryKind::Read => Counter::Read,
        QueryKind::Write => Counter::Write,
        QueryKind::Other => Counter::Other,
    };
    with_current(|ctx| ctx.count(c));
}

/// The `errinfo` table for the prelude; counts ignorable errors.
fn error_info(lua: &Lua, e: &SqlError) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let kind = match e.kind {
        SqlErrorKind::Ignorable { reconnected } => {
            with_current(|ctx| {
                ctx.count(if reconnected {
                    Counter::Reconnect
                } else {
                    Counter::Error
                })
            });
            "ignorable"
        }
        SqlErrorKind::Fatal => "fatal",
        SqlErrorKind::Connect => "connect",
    };
    t.set("kind", kind)?;
    t.set("sql_errno", e.errno)?;
    t.set("sql_state", e.sqlstate.as_str())?;
    t.set("sql_errmsg", e.message.as_str())?;
    if let Some(q) = &e.query {
        t.set("query", q.as_str())?;
    }
    t.set("message", e.to_string())?;
    t.set("fatal_lines", lua.create_sequence_from(e.fatal_lines())?)?;
    Ok(t)
}

fn closed_error(lua: &Lua, kind: DriverKind) -> mlua::Result<Table> {
    let e = SqlError::new(
        kind,
        bmk_sql::SqlOp::Query,
        0,
        "",
        "the connection is closed",
    );
    error_info(lua, &e)
}

/// `(true, rs_or_nil)` or `(false, errinfo)`.
fn result(lua: &Lua, r: Result<Option<ResultSet>, SqlError>) -> mlua::Result<Outcome> {
    let (ok, v) = match r {
        Ok(Some(rs)) => (
            true,
            Value::UserData(lua.create_userdata(LuaResultSet::new(rs))?),
        ),
        Ok(None) => (true, Value::Nil),
        Err(e) => (false, Value::Table(error_info(lua, &e)?)),
    };
    Ok((ok, v))
}

fn status(lua: &Lua, r: Result<(), SqlError>) -> mlua::Result<Outcome> {
    Ok(match r {
        Ok(()) => (true, Value::Nil),
        Err(e) => (false, Value::Table(error_info(lua, &e)?)),
    })
}

/// `sysbench.sql.driver()`.
struct LuaDriver {
    driver: Driver,
}

impl UserData for LuaDriver {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("name", |_, d, ()| Ok(d.driver.name()));
        methods.add_method("connect", |lua, d, ()| {
            let index = CONNECTIONS.fetch_add(1, Ordering::Relaxed);
            match d.driver.connect(index) {
                Ok(conn) => Ok((
                    true,
                    Value::UserData(lua.create_userdata(LuaConnection {
                        shared: Rc::new(RefCell::new(Some(conn))),
                        kind: d.driver.kind(),
                    })?),
                )),
                Err(mut e) => {
                    if e.kind != SqlErrorKind::Connect && !e.is_ignorable() {
                        e.kind = SqlErrorKind::Connect;
                    }
                    Ok((false, Value::Table(error_info(lua, &e)?)))
                }
            }
        });
    }
}

type SharedConn = Rc<RefCell<Option<Box<dyn Connection>>>>;

/// A connection (`drv:connect()`); statements share it.
struct LuaConnection {
    shared: SharedConn,
    kind: DriverKind,
}

impl LuaConnection {
    fn with<R>(
        &self,
        lua: &Lua,
        f: impl FnOnce(&mut dyn Connection) -> mlua::Result<R>,
        closed: impl FnOnce(Table) -> mlua::Result<R>,
    ) -> mlua::Result<R> {
        let mut guard = self.shared.borrow_mut();
        match guard.as_deref_mut() {
            Some(c) => f(c),
            None => closed(closed_error(lua, self.kind)?),
        }
    }
}

fn failed(info: Table) -> mlua::Result<Outcome> {
    Ok((false, Value::Table(info)))
}

impl UserData for LuaConnection {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method("query", |lua, c, sql: mlua::LuaString| {
            let sql = sql.to_str()?.to_owned();
            c.with(
                lua,
                |conn| {
                    let r = conn.query(&sql);
                    if r.is_ok() {
                        count(classify(&sql));
                    }
                    result(lua, r)
                },
                failed,
            )
        });
        methods.add_method("prepare", |lua, c, sql: mlua::LuaString| {
            let sql = sql.to_str()?.to_owned();
            c.with(
                lua,
                |conn| match conn.prepare(&sql) {
                    Ok(id) => Ok((
                        true,
                        Value::UserData(lua.create_userdata(LuaStatement {
                            conn: c.shared.clone(),
                            kind: c.kind,
                            id: Some(id),
                            query_kind: classify(&sql),
                            types: Vec::new(),
                            values: Vec::new(),
                        })?),
                    )),
                    Err(e) => failed(error_info(lua, &e)?),
                },
                failed,
            )
        });
        methods.add_method("bulk_insert_init", |lua, c, prefix: mlua::LuaString| {
            let prefix = prefix.to_str()?.to_owned();
            c.with(
                lua,
                |conn| status(lua, conn.bulk_insert_init(&prefix)),
                failed,
            )
        });
        methods.add_method("bulk_insert_next", |lua, c, tuple: mlua::LuaString| {
            let tuple = tuple.to_str()?.to_owned();
            c.with(
                lua,
                |conn| status(lua, conn.bulk_insert_next(&tuple)),
                failed,
            )
        });
        methods.add_method("bulk_insert_done", |lua, c, ()| {
            c.with(
                lua,
                |conn| {
                    let r = conn.bulk_insert_done();
                    if r.is_ok() {
                        count(QueryKind::Write);
                    }
                    status(lua, r)
                },
                failed,
            )
        });
        methods.add_method("reconnect", |lua, c, ()| {
            c.with(lua, |conn| status(lua, conn.reconnect()), failed)
        });
        methods.add_method("disconnect", |_, c, ()| {
            if let Some(mut conn) = c.shared.borrow_mut().take() {
                conn.disconnect();
            }
            Ok(())
        });
        methods.add_method("more_results", |_, c, ()| {
            Ok(c.shared
                .borrow_mut()
                .as_deref_mut()
                .is_some_and(|conn| conn.more_results()))
        });
        methods.add_method("next_result", |lua, c, ()| {
            c.with(lua, |conn| result(lua, conn.next_result()), failed)
        });
    }
}

/// How one bound parameter converts Lua values (`stmt:bind_create(type [, max_len])`;
/// the parameter objects themselves are Lua tables holding the current value).
#[derive(Clone, Copy)]
struct ParamType {
    ty: SqlType,
    max_len: usize,
}

impl ParamType {
    fn text(self, mut bytes: Vec<u8>) -> SqlValue {
        if self.max_len > 0 && matches!(self.ty, SqlType::Char | SqlType::VarChar) {
            bytes.truncate(self.max_len);
        }
        if self.ty.is_integer() || self.ty.is_float() {
            self.ty.value_from_text(&bytes)
        } else {
            SqlValue::Text(bytes)
        }
    }

    fn number(self, n: f64) -> SqlValue {
        match self.ty {
            t if t.is_integer() => SqlValue::Int(n as i64),
            SqlType::Float => SqlValue::Float(n as f32),
            SqlType::Double => SqlValue::Double(n),
            _ => {
                let text = if n.fract() == 0.0 && n.abs() < 1e15 {
                    format!("{}", n as i64)
                } else {
                    format!("{n}")
                };
                self.text(text.into_bytes())
            }
        }
    }

    /// The bind value of a Lua value: nil is NULL, numbers and strings convert to
    /// the parameter's type, cdata (64-bit integers) by their text.
    fn value(self, v: &Value) -> mlua::Result<SqlValue> {
        Ok(match v {
            Value::Nil => SqlValue::Null,
            Value::Boolean(b) => SqlValue::Int(*b as i64),
            Value::Integer(i) => self.number(*i as f64),
            Value::Number(n) => self.number(*n),
            Value::String(s) => self.text(s.as_bytes().to_vec()),
            other => {
                let text = other.to_string()?;
                let text = text.trim_end_matches("ULL").trim_end_matches("LL");
                self.text(text.as_bytes().to_vec())
            }
        })
    }
}

/// A prepared statement (`con:prepare(sql)`).
struct LuaStatement {
    conn: SharedConn,
    kind: DriverKind,
    id: Option<StatementId>,
    query_kind: QueryKind,
    types: Vec<ParamType>,
    values: Vec<SqlValue>,
}

impl UserData for LuaStatement {
    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        // bind_types(type1, max_len1, type2, max_len2, ...) for the parameters that
        // `stmt:bind_param` bound, in placeholder order.
        methods.add_method_mut("bind_types", |_, s, spec: mlua::Variadic<f64>| {
            s.types.clear();
            for pair in spec.chunks(2) {
                let code = pair[0] as u32;
                let ty = SqlType::from_code(code).ok_or_else(|| {
                    mlua::Error::RuntimeError(format!("invalid sysbench.sql.type value {code}"))
                })?;
                let max_len = pair.get(1).copied().unwrap_or(0.0).max(0.0) as usize;
                s.types.push(ParamType { ty, max_len });
            }
            Ok(())
        });
        methods.add_method_mut("execute", |lua, s, args: mlua::Variadic<Value>| {
            let Some(id) = s.id else {
                return failed(closed_error(lua, s.kind)?);
            };
            s.values.clear();
            for (i, t) in s.types.iter().enumerate() {
                let v = args.get(i).unwrap_or(&Value::Nil);
                s.values.push(t.value(v)?);
            }
            let mut guard = s.conn.borrow_mut();
            let Some(conn) = guard.as_deref_mut() else {
                return failed(closed_error(lua, s.kind)?);
            };
            let r = conn.execute(id, &s.values);
            if r.is_ok() {
                count(s.query_kind);
            }
            result(lua, r)
        });
        methods.add_method_mut("close", |_, s, ()| {
            if let Some(id) = s.id.take() {
                if let Some(conn) = s.conn.borrow_mut().as_deref_mut() {
                    conn.close_statement(id);
                }
            }
            Ok(())
        });
    }
}

/// A result set: `rs.nrows`, `rs.nfields`, `rs:fetch_row()`, `rs:free()`.
struct LuaResultSet {
    rs: ResultSet,
    next: usize,
}

impl LuaResultSet {
    fn new(rs: ResultSet) -> LuaResultSet {
        LuaResultSet { rs, next: 0 }
    }
}

impl UserData for LuaResultSet {
    fn add_fields<F: UserDataFields<Self>>(fields: &mut F) {
        fields.add_field_method_get("nrows", |_, r| Ok(r.rs.nrows()));
        fields.add_field_method_get("nfields", |_, r| Ok(r.rs.nfields));
    }

    fn add_methods<M: UserDataMethods<Self>>(methods: &mut M) {
        methods.add_method_mut("fetch_row", |lua, r, ()| {
            if r.next >= r.rs.nrows() {
                return Ok(Value::Nil);
            }
            let row = r.next;
            r.next += 1;
            let t = lua.create_table_with_capacity(r.rs.nfields, 0)?;
            for col in 0..r.rs.nfields {
                if let Some(v) = r.rs.get(row, col) {
                    t.raw_set(col + 1, lua.create_string(v)?)?;
                }
            }
            Ok(Value::Table(t))
        });
        methods.add_method_mut("free", |_, r, ()| {
            r.rs = ResultSet::default();
            r.next = 0;
            Ok(())
        });
    }
}
