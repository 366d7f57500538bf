//! The native OLTP worker: one connection, the statements of its plan prepared once
//! per table, and events that bind parameters in place and execute them in the order
//! the Lua workload would (same random draws, same counters, same restart rules).

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bmk_engine::{rand, Counter, EventFlow, Worker, WorkerContext, WorkerError, Workload};
use bmk_sql::{
    counted_as, Connection, Driver, QueryKind, ResultSet, SqlError, SqlErrorKind, StatementId,
    Value,
};

use super::plan::{Group, OltpPlan, StmtKind};

/// `c` values: 10 groups of 11 random digits joined by `-`, as the stock workloads
/// fill the `c` column.
const C_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########-\
###########-###########-###########-###########-###########";
/// `pad` values: 5 groups of 11 random digits joined by `-`.
const PAD_TEMPLATE: &[u8] = b"###########-###########-###########-###########-###########";

/// Number of [`StmtKind`]s: the stride of the per-table statement table.
const KINDS: usize = StmtKind::ALL.len();

fn slot(kind: StmtKind) -> usize {
    kind as usize
}

/// The bind values of a statement kind, shaped once so that events only overwrite
/// integers and refill text buffers in place.
fn param_shape(kind: StmtKind) -> Vec<Value> {
    let text = |t: &[u8]| Value::Text(t.to_vec());
    match kind {
        StmtKind::PointSelect | StmtKind::IndexUpdate | StmtKind::Delete => vec![Value::Int(0)],
        StmtKind::SimpleRange
        | StmtKind::SumRange
        | StmtKind::OrderRange
        | StmtKind::DistinctRange => vec![Value::Int(0), Value::Int(0)],
        StmtKind::NonIndexUpdate => vec![text(C_TEMPLATE), Value::Int(0)],
        StmtKind::Insert => vec![
            Value::Int(0),
            Value::Int(0),
            text(C_TEMPLATE),
            text(PAD_TEMPLATE),
        ],
    }
}

fn set_int(v: &mut Value, n: i64) {
    *v = Value::Int(n);
}

fn fill_text(v: &mut Value, template: &[u8]) {
    if let Value::Text(buf) = v {
        rand::fill_template(template, buf);
    }
}

/// A natively run OLTP workload as an engine [`Workload`].
pub(crate) struct NativeOltp {
    pub plan: Arc<OltpPlan>,
    pub driver: Driver,
    /// Connections opened so far: spreads them over the configured hosts.
    pub connections: AtomicUsize,
}

impl Workload for NativeOltp {
    fn cooperative(&self) -> bool {
        self.driver.waits_cooperatively()
    }

    fn create_worker(&self, _tid: u32) -> Result<Box<dyn Worker>, WorkerError> {
        let index = self.connections.fetch_add(1, Ordering::Relaxed);
        let conn = match self.driver.connect(index) {
            Ok(c) => c,
            Err(mut e) => {
                if e.kind != SqlErrorKind::Connect && !e.is_ignorable() {
                    e.kind = SqlErrorKind::Connect;
                }
                bmk_engine::with_current(|ctx| count_error(ctx, &e));
                print_fatal(&e);
                return Err(WorkerError::new("connection creation failed"));
            }
        };
        let mut worker = OltpWorker {
            params: StmtKind::ALL.iter().map(|&k| param_shape(k)).collect(),
            plan: self.plan.clone(),
            conn,
            stmts: Vec::new(),
            begin: None,
            commit: None,
            rs: ResultSet::default(),
            need_prepare: false,
        };
        worker.prepare().map_err(|e| fatal(&e))?;
        Ok(Box::new(worker))
    }
}

/// A prepared statement.
#[derive(Clone, Copy)]
struct Prepared {
    id: StatementId,
}

/// The counter an execution adds to: by the server's answer, as the Lua SQL bridge
/// counts (a DELETE or UPDATE that matched no row is `other`).
#[inline]
fn counter(has_result_set: bool, affected_rows: u64) -> Counter {
    match counted_as(has_result_set, affected_rows) {
        QueryKind::Read => Counter::Read,
        QueryKind::Write => Counter::Write,
        QueryKind::Other => Counter::Other,
    }
}

/// Counts a failed statement or reconnect, as the Lua SQL bridge does; not a fatal
/// error, which ends the worker: the report's "ignored errors" are the errors the run
/// went on after.
fn count_error(ctx: &WorkerContext, e: &SqlError) {
    if matches!(e.kind, SqlErrorKind::Fatal) {
        return;
    }
    if let Some(c) = e.counter() {
        ctx.count(c);
    }
}

/// Prints the error's FATAL lines in one write, so that lines of concurrent failures
/// do not interleave; for a missing table, what to do about it as well.
fn print_fatal(e: &SqlError) {
    let mut text = String::new();
    for line in e.fatal_lines() {
        text.push_str(&line);
        text.push('\n');
    }
    if e.is_missing_table() {
        text.push_str(MISSING_TABLES);
        text.push('\n');
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// A fatal SQL error: its FATAL lines are printed, the message stops the run.
fn fatal(e: &SqlError) -> WorkerError {
    if !e.is_ignorable() {
        print_fatal(e);
    }
    WorkerError::new(e.to_string())
}

/// What to do about a missing table (the scripts print the same text).
const MISSING_TABLES: &str = concat!("FATAL: ", missing_tables_hint!());

/// One worker's connection and statements.
struct OltpWorker {
    plan: Arc<OltpPlan>,
    conn: Box<dyn Connection>,
    /// `(table - 1) * KINDS + slot(kind)`; `None` for kinds the plan does not use.
    stmts: Vec<Option<Prepared>>,
    begin: Option<Prepared>,
    commit: Option<Prepared>,
    /// Bind values per statement kind (index `slot(kind)`).
    params: Vec<Vec<Value>>,
    /// Result of the last execution; reused so executing allocates nothing.
    rs: ResultSet,
    /// Statements must be prepared again before the next attempt (after a reconnect
    /// whose re-prepare failed with an ignorable error).
    need_prepare: bool,
}

impl OltpWorker {
    /// Prepares BEGIN/COMMIT (with transactions) and every statement of the plan for
    /// every table, in the order of the Lua workload.
    fn prepare(&mut self) -> Result<(), SqlError> {
        let plan = self.plan.clone();
        let prepare =
            |conn: &mut dyn Connection, sql: &str| conn.prepare(sql).map(|id| Prepared { id });
        if plan.transaction {
            self.begin = Some(prepare(self.conn.as_mut(), "BEGIN")?);
            self.commit = Some(prepare(self.conn.as_mut(), "COMMIT")?);
        }
        self.stmts = vec![None; plan.tables as usize * KINDS];
        for &kind in &plan.prepared {
            for n in 1..=plan.tables {
                let sql = plan.statement(kind, n);
                let p = prepare(self.conn.as_mut(), &sql)?;
                self.stmts[(n as usize - 1) * KINDS + slot(kind)] = Some(p);
            }
        }
        self.need_prepare = false;
        Ok(())
    }

    fn close_statements(&mut self) {
        let all = self.stmts.drain(..).flatten();
        let ids: Vec<StatementId> = all
            .chain(self.begin.take())
            .chain(self.commit.take())
            .map(|p| p.id)
            .collect();
        for id in ids {
            self.conn.close_statement(id);
        }
    }

    #[inline]
    fn run_prepared(
        &mut self,
        ctx: &WorkerContext,
        p: Prepared,
        kind: Option<StmtKind>,
    ) -> Result<(), SqlError> {
        let params: &[Value] = match kind {
            Some(k) => &self.params[slot(k)],
            None => &[],
        };
        let has_rows = self.conn.execute_into(p.id, params, &mut self.rs)?;
        let counted = counter(has_rows, self.conn.affected_rows());
        ctx.count(counted);
        if counted == Counter::Read {
            // What the read found, as the Lua bridge counts it: the rows, and the read
            // as empty when there were none.
            let rows = self.rs.nrows() as u64;
            ctx.count_n(Counter::Rows, rows);
            if rows == 0 {
                ctx.count(Counter::EmptyReads);
            }
        }
        Ok(())
    }

    #[inline]
    fn exec(&mut self, ctx: &WorkerContext, table: u32, kind: StmtKind) -> Result<(), SqlError> {
        let p = self.stmts[(table as usize - 1) * KINDS + slot(kind)]
            .expect("the plan prepares every statement its events run");
        self.run_prepared(ctx, p, Some(kind))
    }

    fn table(&self) -> u32 {
        rand::uniform(1, self.plan.tables)
    }

    fn id(&self) -> i64 {
        rand::default(1, self.plan.table_size) as i64
    }

    /// One attempt at the event's transaction.
    fn attempt(&mut self, ctx: &WorkerContext) -> Result<(), SqlError> {
        if self.need_prepare {
            self.close_statements();
            self.prepare()?;
        }
        if let Some(begin) = self.begin {
            self.run_prepared(ctx, begin, None)?;
        }
        // Indexing (groups are Copy) keeps the per-event path free of an Arc clone.
        for g in 0..self.plan.groups.len() {
            match self.plan.groups[g] {
                Group::PointSelects(n) => {
                    let t = self.table();
                    for _ in 0..n {
                        let id = self.id();
                        set_int(&mut self.params[slot(StmtKind::PointSelect)][0], id);
                        self.exec(ctx, t, StmtKind::PointSelect)?;
                    }
                }
                Group::Ranges(kind, n) => {
                    let t = self.table();
                    let range_size = self.plan.range_size;
                    for _ in 0..n {
                        let id = self.id();
                        let p = &mut self.params[slot(kind)];
                        set_int(&mut p[0], id);
                        set_int(&mut p[1], id + range_size - 1);
                        self.exec(ctx, t, kind)?;
                    }
                }
                Group::IndexUpdates(n) => {
                    let t = self.table();
                    for _ in 0..n {
                        let id = self.id();
                        set_int(&mut self.params[slot(StmtKind::IndexUpdate)][0], id);
                        self.exec(ctx, t, StmtKind::IndexUpdate)?;
                    }
                }
                Group::NonIndexUpdates(n) => {
                    let t = self.table();
                    for _ in 0..n {
                        fill_text(
                            &mut self.params[slot(StmtKind::NonIndexUpdate)][0],
                            C_TEMPLATE,
                        );
                        let id = self.id();
                        set_int(&mut self.params[slot(StmtKind::NonIndexUpdate)][1], id);
                        self.exec(ctx, t, StmtKind::NonIndexUpdate)?;
                    }
                }
                Group::DeleteInserts(n) => {
                    let t = self.table();
                    for _ in 0..n {
                        let id = self.id();
                        let k = self.id();
                        set_int(&mut self.params[slot(StmtKind::Delete)][0], id);
                        self.exec(ctx, t, StmtKind::Delete)?;
                        let p = &mut self.params[slot(StmtKind::Insert)];
                        set_int(&mut p[0], id);
                        set_int(&mut p[1], k);
                        fill_text(&mut p[2], C_TEMPLATE);
                        fill_text(&mut p[3], PAD_TEMPLATE);
                        self.exec(ctx, t, StmtKind::Insert)?;
                    }
                }
                Group::Deletes(n) => {
                    let t = self.table();
                    for _ in 0..n {
                        let id = self.id();
                        set_int(&mut self.params[slot(StmtKind::Delete)][0], id);
                        self.exec(ctx, t, StmtKind::Delete)?;
                    }
                }
            }
        }
        if let Some(commit) = self.commit {
            self.run_prepared(ctx, commit, None)?;
        }
        Ok(())
    }
}

impl Worker for OltpWorker {
    fn event(&mut self, ctx: &WorkerContext) -> Result<EventFlow, WorkerError> {
        loop {
            match self.attempt(ctx) {
                Ok(()) => return Ok(EventFlow::Continue),
                Err(e) if e.is_ignorable() => {
                    count_error(ctx, &e);
                    // After a lost connection the statements are prepared again before
                    // the event restarts, as the Lua workloads do.
                    if e.reconnected() {
                        self.need_prepare = true;
                    }
                    // sysbench retries forever; a run that is stopping gives the
                    // event up, unrecorded.
                    if ctx.abandon_event_if_stopping() {
                        return Ok(EventFlow::StopWorker);
                    }
                }
                Err(e) => {
                    count_error(ctx, &e);
                    return Err(fatal(&e));
                }
            }
        }
    }

    fn finish(&mut self, _ctx: &WorkerContext) -> Result<(), WorkerError> {
        self.close_statements();
        self.conn.disconnect();
        Ok(())
    }
}
