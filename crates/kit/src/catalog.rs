//! The scenario catalog: the BMK kit's script names (`OLTP_RW_10M_8tab-uniform-ps-trx`),
//! parsed as data into the plain bmk command line they stand for.
//!
//! A name is a head (family and data set: `OLTP_RW_10M_8tab`, `TPCC_10x100W`,
//! `dbSTRESS_10M`, or `Prepare_` followed by one of those) and `-`-separated tokens, in
//! any order, each at most once per kind. The `sb11-` prefix and `.sh` suffix of the
//! kit's file names are accepted and dropped. Nothing here runs anything: a
//! [`Scenario`] only knows its test and options, and writes the command line
//! ([`Scenario::args`]); `bmk kit show` prints exactly that line.

use crate::error::KitError;

/// Loader connections of a prepare when none are given (the kit's default).
pub const DEFAULT_LOADERS: u32 = 32;
/// The UNIX socket a `socket` scenario uses unless the target names one.
pub const DEFAULT_SOCKET: &str = "/run/mysqld/mysqld.sock";

/// The random distributions (`--rand-type`).
const RAND_TYPES: [&str; 5] = ["uniform", "pareto", "zipfian", "gaussian", "special"];
/// Storage engines a prepare may name (`--mysql-storage-engine`).
const ENGINES: [&str; 5] = ["InnoDB", "MyISAM", "RocksDB", "Aria", "MEMORY"];
/// The OLTP run tokens besides the distributions.
const OLTP_TOKENS: [&str; 9] = [
    "ps",
    "p_sel1",
    "upd_noidx1",
    "upd_idx1",
    "upd_insdel1",
    "reconnect",
    "socket",
    "trx",
    "notrx",
];
/// The dbSTRESS run tokens (`RW<n>` stands for every ratio).
const DBSTRESS_TOKENS: [&str; 10] = [
    "RO", "RW<n>", "SEL1", "SEL2", "UPD", "xDEAD", "xREF", "trx", "notrx", "socket",
];

/// What the scenario does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Load a data set (`Prepare_...`).
    Prepare,
    /// Run a workload at some users for some seconds.
    Run,
}

/// A parsed scenario name.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// The name as given, without `sb11-` and `.sh`.
    pub name: String,
    /// Prepare or run.
    pub action: Action,
    /// The bmk test (`oltp_read_write`, `tpcc`, `dbstress`, ...).
    pub test: String,
    /// The test's options, in command-line order.
    pub options: Vec<(String, String)>,
    /// Whether it connects through the UNIX socket (`socket`).
    pub socket: bool,
}

/// The name being parsed: for messages, and the name of the scenario it becomes.
struct Ctx<'a> {
    name: &'a str,
}

impl Ctx<'_> {
    fn err(&self, what: String) -> KitError {
        KitError::Scenario(format!("scenario '{}': {what}", self.name))
    }

    fn unknown(&self, token: &str, after: &str, valid: &[&str]) -> KitError {
        self.err(format!(
            "unknown token '{token}' after {after} (valid: {})",
            valid.join(", ")
        ))
    }

    /// The scenario this name stands for.
    fn scenario(
        &self,
        action: Action,
        test: &str,
        options: Vec<(String, String)>,
        socket: bool,
    ) -> Scenario {
        Scenario {
            name: self.name.to_string(),
            action,
            test: test.to_string(),
            options,
            socket,
        }
    }
}

/// `10M` → 10 000 000: digits with an optional K, M or G (powers of 1000).
fn count(s: &str) -> Option<u64> {
    let (digits, mult) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1_000),
        b'M' | b'm' => (&s[..s.len() - 1], 1_000_000),
        b'G' | b'g' => (&s[..s.len() - 1], 1_000_000_000),
        _ => (s, 1),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits
        .parse::<u64>()
        .ok()?
        .checked_mul(mult)
        .filter(|n| *n > 0)
}

/// `10x100W` → (10, 100); `1000W` → (1, 1000). `unit` is the trailing letter, if any.
fn sets_times(s: &str, unit: Option<char>) -> Option<(u64, u64)> {
    let body = match unit {
        Some(u) => s.strip_suffix(u)?,
        None => s,
    };
    match body.split_once('x') {
        Some((n, each)) => Some((count(n)?, count(each)?)),
        None => Some((1, count(body)?)),
    }
}

/// One kind of token: which one was given already.
#[derive(Default)]
struct Slot(Option<String>);

impl Slot {
    fn set(&mut self, ctx: &Ctx, kind: &str, token: &str) -> Result<(), KitError> {
        if let Some(prev) = &self.0 {
            return Err(ctx.err(format!(
                "token '{token}' repeats the {kind} already given ('{prev}')"
            )));
        }
        self.0 = Some(token.to_string());
        Ok(())
    }

    fn is(&self, token: &str) -> bool {
        self.0.as_deref() == Some(token)
    }
}

fn opt(name: &str, value: impl ToString) -> (String, String) {
    (name.to_string(), value.to_string())
}

/// The valid heads, for the message about a name that starts with none of them.
const HEADS: &str = "OLTP_RO_<rows>_<N>tab, OLTP_RW_<rows>_<N>tab, TPCC_<W>W, TPCC_<N>x<W>W, dbSTRESS_<rows>, dbSTRESS_<N>x<rows>, and Prepare_<rows>_<N>tab, Prepare_TPCC_..., Prepare_dbSTRESS_...";

/// Parses a scenario name.
pub fn parse(name: &str) -> Result<Scenario, KitError> {
    let name = name.trim();
    let name = name.strip_prefix("sb11-").unwrap_or(name);
    let name = name.strip_suffix(".sh").unwrap_or(name);
    let ctx = Ctx { name };
    let mut tokens = name.split('-');
    let head = tokens.next().unwrap_or("");
    let rest: Vec<&str> = tokens.collect();
    if rest.iter().any(|t| t.is_empty()) {
        return Err(ctx.err("empty token (two '-' in a row, or a trailing '-')".into()));
    }
    let (action, head) = match head.strip_prefix("Prepare_") {
        Some(h) => (Action::Prepare, h),
        None => (Action::Run, head),
    };
    if let Some(size) = head.strip_prefix("TPCC_") {
        return tpcc(&ctx, action, size, &rest);
    }
    if let Some(size) = head.strip_prefix("dbSTRESS_") {
        return match action {
            Action::Prepare => dbstress_prepare(&ctx, size, &rest),
            Action::Run => dbstress_run(&ctx, size, &rest),
        };
    }
    // OLTP: a run head carries the family; a prepare head is only the data set.
    match action {
        Action::Prepare => oltp_prepare(&ctx, head, &rest),
        Action::Run => {
            let (family, size) = if let Some(s) = head.strip_prefix("OLTP_RO_") {
                ("RO", s)
            } else if let Some(s) = head.strip_prefix("OLTP_RW_") {
                ("RW", s)
            } else {
                return Err(ctx.err(format!(
                    "'{head}' is not a scenario (a name starts with one of: {HEADS})"
                )));
            };
            oltp_run(&ctx, family, size, &rest)
        }
    }
}

/// The storage engine token among a prepare's tokens, if it is one.
fn is_engine(token: &str) -> bool {
    ENGINES.iter().any(|x| x.eq_ignore_ascii_case(token))
}

/// `--mysql-storage-engine` for the engine token given, if any.
fn push_engine(options: &mut Vec<(String, String)>, engine: &Slot) {
    if let Some(e) = &engine.0 {
        options.push(opt("mysql-storage-engine", e.to_ascii_lowercase()));
    }
}

/// `TPCC_<size>` and `Prepare_TPCC_<size>`.
fn tpcc(ctx: &Ctx, action: Action, size: &str, rest: &[&str]) -> Result<Scenario, KitError> {
    let (sets, wh) = sets_times(size, Some('W')).ok_or_else(|| {
        ctx.err(format!(
            "'{size}' is not a TPC-C size (expected <W>W or <N>x<W>W, e.g. 1000W, 10x100W)"
        ))
    })?;
    let mut options = vec![opt("tables", sets), opt("scale", wh)];
    let (mut null, mut fk, mut engine, mut socket) = (
        Slot::default(),
        Slot::default(),
        Slot::default(),
        Slot::default(),
    );
    let valid: &[&str] = match action {
        Action::Prepare => &[
            "NULL", "NoFK", "NoFK2", "InnoDB", "MyISAM", "RocksDB", "Aria", "MEMORY",
        ],
        Action::Run => &["NULL", "socket"],
    };
    for t in rest {
        match (*t, action) {
            ("NULL", _) => null.set(ctx, "NULL variant", t)?,
            ("NoFK" | "NoFK2", Action::Prepare) => fk.set(ctx, "foreign-key variant", t)?,
            ("socket", Action::Run) => socket.set(ctx, "connection", t)?,
            (e, Action::Prepare) if is_engine(e) => engine.set(ctx, "storage engine", t)?,
            _ => return Err(ctx.unknown(t, &format!("TPCC_{size}"), valid)),
        }
    }
    if null.0.is_some() {
        options.push(opt("force-null", 1));
    }
    push_engine(&mut options, &engine);
    match fk.0.as_deref() {
        Some("NoFK") => options.push(opt("use-fk", 0)),
        Some("NoFK2") => options.push(opt("use-fk", 2)),
        _ => {}
    }
    Ok(ctx.scenario(action, "tpcc", options, socket.0.is_some()))
}

/// The options of a dbSTRESS data set size: `10M` or `10x1M`.
fn dbstress_size(ctx: &Ctx, size: &str) -> Result<Vec<(String, String)>, KitError> {
    let (sets, objects) = sets_times(size, None).ok_or_else(|| {
        ctx.err(format!(
            "'{size}' is not a dbSTRESS size (expected <objects> or <N>x<objects>, e.g. 10M, 10x1M)"
        ))
    })?;
    Ok(vec![
        opt("obj-tables", sets),
        opt("obj-table-size", objects),
    ])
}

/// `Prepare_dbSTRESS_<size>`: an engine and the HISTORY key variant.
fn dbstress_prepare(ctx: &Ctx, size: &str, rest: &[&str]) -> Result<Scenario, KitError> {
    let mut options = dbstress_size(ctx, size)?;
    let (mut engine, mut hpk) = (Slot::default(), Slot::default());
    for t in rest {
        match *t {
            "HPK" => hpk.set(ctx, "HISTORY key", t)?,
            e if is_engine(e) => engine.set(ctx, "storage engine", t)?,
            _ => {
                let mut valid = ENGINES.to_vec();
                valid.push("HPK");
                return Err(ctx.unknown(t, &format!("dbSTRESS_{size}"), &valid));
            }
        }
    }
    push_engine(&mut options, &engine);
    if hpk.0.is_some() {
        options.push(opt("hpk", "on"));
    }
    Ok(ctx.scenario(Action::Prepare, "dbstress", options, false))
}

/// `dbSTRESS_<size>-...`: the tokens (all but `socket`) become `--scenario`.
fn dbstress_run(ctx: &Ctx, size: &str, rest: &[&str]) -> Result<Scenario, KitError> {
    let mut options = dbstress_size(ctx, size)?;
    let after = format!("dbSTRESS_{size}");
    let (mut mode, mut sel, mut upd, mut dead, mut sref, mut trx, mut socket) = (
        Slot::default(),
        Slot::default(),
        Slot::default(),
        Slot::default(),
        Slot::default(),
        Slot::default(),
        Slot::default(),
    );
    let mut pieces = Vec::new();
    for t in rest {
        match *t {
            "RO" => mode.set(ctx, "read/write mode", t)?,
            rw if rw
                .strip_prefix("RW")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n >= 1) =>
            {
                mode.set(ctx, "read/write mode", t)?
            }
            "SEL1" | "SEL2" => sel.set(ctx, "SELECT choice", t)?,
            "UPD" => upd.set(ctx, "write kind", t)?,
            "xDEAD" => dead.set(ctx, "anti-deadlock switch", t)?,
            "xREF" => sref.set(ctx, "same-reference switch", t)?,
            "trx" | "notrx" => trx.set(ctx, "transaction mode", t)?,
            "socket" => {
                socket.set(ctx, "connection", t)?;
                continue;
            }
            _ => return Err(ctx.unknown(t, &after, &DBSTRESS_TOKENS)),
        }
        pieces.push(*t);
    }
    if mode.0.is_none() {
        return Err(ctx.err(format!(
            "a dbSTRESS run names its mode: RO or RW<n> (e.g. dbSTRESS_{size}-RO-notrx, dbSTRESS_{size}-RW1-trx)"
        )));
    }
    if upd.0.is_some() && mode.is("RO") {
        return Err(ctx.err("token 'UPD' needs a read-write mode (RW<n>), not RO".into()));
    }
    options.push(opt("scenario", pieces.join("-")));
    Ok(ctx.scenario(Action::Run, "dbstress", options, socket.0.is_some()))
}

/// The options of an OLTP data set size, `<rows>_<N>tab`. `prepare` says whether the
/// head was a prepare's, for the message about a head that is no data set.
fn oltp_size(ctx: &Ctx, size: &str, prepare: bool) -> Result<Vec<(String, String)>, KitError> {
    let (rows, tables) = size
        .split_once('_')
        .and_then(|(rows, tabs)| Some((count(rows)?, count(tabs.strip_suffix("tab")?)?)))
        .ok_or_else(|| {
            if prepare && !size.contains("tab") {
                ctx.err(format!(
                    "'Prepare_{size}' is not a data set (a name starts with one of: {HEADS})"
                ))
            } else {
                ctx.err(format!(
                    "'{size}' is not a data set size (expected <rows>_<N>tab, e.g. 10M_8tab, 50M_1tab)"
                ))
            }
        })?;
    Ok(vec![opt("tables", tables), opt("table-size", rows)])
}

/// `Prepare_<rows>_<N>tab`: only a storage engine may follow.
fn oltp_prepare(ctx: &Ctx, size: &str, rest: &[&str]) -> Result<Scenario, KitError> {
    let mut options = oltp_size(ctx, size, true)?;
    let mut engine = Slot::default();
    for t in rest {
        if is_engine(t) {
            engine.set(ctx, "storage engine", t)?;
        } else {
            return Err(ctx.unknown(t, &format!("Prepare_{size}"), &ENGINES));
        }
    }
    push_engine(&mut options, &engine);
    Ok(ctx.scenario(Action::Prepare, "oltp_read_write", options, false))
}

/// The tokens of an OLTP run, each kind at most once.
#[derive(Default)]
struct OltpTokens {
    rand: Slot,
    ps: Slot,
    only: Slot,
    reconnect: Slot,
    socket: Slot,
    trx: Slot,
}

/// `OLTP_RO_<size>-...` and `OLTP_RW_<size>-...` (`family` is `RO` or `RW`).
fn oltp_run(ctx: &Ctx, family: &str, size: &str, rest: &[&str]) -> Result<Scenario, KitError> {
    let mut options = oltp_size(ctx, size, false)?;
    let tokens = oltp_tokens(ctx, family, size, rest)?;
    let (test, extra) = oltp_test(family, &tokens);
    // The single-statement workloads never open a transaction; the others take
    // --skip-trx for notrx.
    let single = matches!(
        test,
        "oltp_point_select" | "oltp_update_non_index" | "oltp_update_index"
    );
    if let Some(r) = &tokens.rand.0 {
        options.push(opt("rand-type", r));
    }
    options.push(opt(
        "db-ps-mode",
        if tokens.ps.0.is_some() {
            "auto"
        } else {
            "disable"
        },
    ));
    options.extend(extra);
    if tokens.trx.is("notrx") && !single {
        options.push(opt("skip-trx", "on"));
    }
    Ok(ctx.scenario(Action::Run, test, options, tokens.socket.0.is_some()))
}

/// Reads and checks the tokens of an OLTP run.
fn oltp_tokens(ctx: &Ctx, family: &str, size: &str, rest: &[&str]) -> Result<OltpTokens, KitError> {
    let mut k = OltpTokens::default();
    let mut valid: Vec<&str> = RAND_TYPES.to_vec();
    valid.extend(OLTP_TOKENS);
    for t in rest {
        match *t {
            r if RAND_TYPES.contains(&r) => k.rand.set(ctx, "random distribution", t)?,
            "ps" => k.ps.set(ctx, "prepared-statement switch", t)?,
            "p_sel1" | "upd_noidx1" | "upd_idx1" | "upd_insdel1" => {
                k.only.set(ctx, "query choice", t)?;
                let wants = if *t == "p_sel1" { "RO" } else { "RW" };
                if family != wants {
                    return Err(ctx.err(format!(
                        "token '{t}' belongs to OLTP_{wants}, not OLTP_{family}"
                    )));
                }
            }
            "reconnect" => k.reconnect.set(ctx, "reconnect switch", t)?,
            "socket" => k.socket.set(ctx, "connection", t)?,
            "trx" | "notrx" => k.trx.set(ctx, "transaction mode", t)?,
            _ => return Err(ctx.unknown(t, &format!("OLTP_{family}_{size}"), &valid)),
        }
    }
    if k.reconnect.0.is_some() && !k.only.is("p_sel1") {
        return Err(
            ctx.err("token 'reconnect' needs p_sel1 (the reconnecting point-select)".into())
        );
    }
    Ok(k)
}

/// The bmk test an OLTP run stands for, and the options that narrow it to the query
/// the name chose.
fn oltp_test(family: &str, tokens: &OltpTokens) -> (&'static str, Vec<(String, String)>) {
    let with_trx = tokens.trx.is("trx");
    let mut extra = Vec::new();
    let test = match (family, tokens.only.0.as_deref()) {
        ("RO", None) => "oltp_read_only",
        ("RW", None) => "oltp_read_write",
        ("RO", Some("p_sel1")) if tokens.reconnect.0.is_some() => "OLTP_RO-point_selects_reconnect",
        ("RO", Some("p_sel1")) if !with_trx => "oltp_point_select",
        ("RO", Some("p_sel1")) => {
            extra.push(opt("point-selects", 1));
            extra.push(opt("range-selects", "off"));
            "oltp_read_only"
        }
        ("RW", Some("upd_noidx1")) if !with_trx => "oltp_update_non_index",
        ("RW", Some("upd_noidx1")) => {
            extra.push(opt("index-updates", 0));
            extra.push(opt("delete-inserts", 0));
            "oltp_write_only"
        }
        ("RW", Some("upd_idx1")) if !with_trx => "oltp_update_index",
        ("RW", Some("upd_idx1")) => {
            extra.push(opt("non-index-updates", 0));
            extra.push(opt("delete-inserts", 0));
            "oltp_write_only"
        }
        _ => "oltp_write_only", // upd_insdel1
    };
    (test, extra)
}

impl Scenario {
    /// The arguments after the program name: `test --opt=value ... command`. A run
    /// gets `--threads=users --time=seconds --report-interval=1`; a prepare gets
    /// `--threads=users` (its loader connections). `socket_path` is used when the
    /// scenario connects through the socket; `extra` options go last, so they win.
    pub fn args(
        &self,
        users: u32,
        seconds: u64,
        socket_path: &str,
        extra: &[String],
    ) -> Vec<String> {
        let mut out = vec![self.test.clone()];
        for (k, v) in &self.options {
            out.push(format!("--{k}={v}"));
        }
        if self.socket {
            out.push(format!("--mysql-socket={socket_path}"));
        }
        out.push(format!("--threads={users}"));
        match self.action {
            Action::Prepare => {
                out.extend(extra.iter().cloned());
                out.push("prepare".into());
            }
            Action::Run => {
                out.push(format!("--time={seconds}"));
                out.push("--report-interval=1".into());
                out.extend(extra.iter().cloned());
                out.push("run".into());
            }
        }
        out
    }
}

/// The grammar's tokens and what each means, as `bmk kit list` prints them.
pub const TOKENS: &[(&str, &str)] = &[
    ("OLTP_RO / OLTP_RW", "read-only / read-write OLTP family"),
    ("<rows>_<N>tab", "rows per table x tables: 10M_8tab, 50M_8tab, 500M_8tab, 50M_1tab, 400M_1tab"),
    ("uniform pareto zipfian gaussian special", "--rand-type"),
    ("ps", "prepared statements (--db-ps-mode=auto); absent: --db-ps-mode=disable"),
    ("p_sel1", "only the point select, 1 per transaction (OLTP_RO)"),
    ("upd_noidx1 / upd_idx1 / upd_insdel1", "only the non-index update / only the index update / write-only (OLTP_RW)"),
    ("reconnect", "with p_sel1: a new connection for every event"),
    ("socket", "connect through the UNIX socket instead of TCP"),
    ("trx / notrx", "with / without BEGIN-COMMIT"),
    ("Prepare_<rows>_<N>tab-<engine>", "load that data set (default 32 loader connections); engines: InnoDB MyISAM RocksDB Aria MEMORY"),
    ("TPCC_<W>W / TPCC_<N>x<W>W", "TPC-C run on 1 or N table sets of W warehouses; -NULL for the NULL variant"),
    ("Prepare_TPCC_<size>[-NULL]-<engine>[-NoFK|-NoFK2]", "TPC-C prepare: NULL columns, no foreign keys, no FK indexes"),
    ("dbSTRESS_<size>-RO|RW<n>[-SEL1|-SEL2][-UPD][-xDEAD][-xREF]-trx|notrx", "dbSTRESS run (its --scenario pieces)"),
    ("Prepare_dbSTRESS_<size>-<engine>[-HPK]", "dbSTRESS prepare; HPK: HISTORY index as primary key"),
];

/// The catalog's named scenarios: those the BMK kit ships and its how-to uses.
pub const CATALOG: &[(&str, &str)] = &[
    ("Prepare_10M_8tab-InnoDB", "load 8 OLTP tables of 10M rows"),
    ("Prepare_50M_8tab-InnoDB", "load 8 OLTP tables of 50M rows"),
    (
        "Prepare_500M_8tab-InnoDB",
        "load 8 OLTP tables of 500M rows",
    ),
    ("Prepare_50M_1tab-InnoDB", "load 1 OLTP table of 50M rows"),
    ("Prepare_400M_1tab-InnoDB", "load 1 OLTP table of 400M rows"),
    (
        "OLTP_RO_10M_8tab-uniform-ps-p_sel1-notrx",
        "point selects, prepared",
    ),
    (
        "OLTP_RO_10M_8tab-uniform-p_sel1-notrx",
        "point selects, not prepared",
    ),
    (
        "OLTP_RO_10M_8tab-uniform-p_sel1-reconnect-notrx",
        "point selects on a new connection each",
    ),
    (
        "OLTP_RO_10M_8tab-uniform-ps-notrx",
        "OLTP read-only, prepared",
    ),
    (
        "OLTP_RO_10M_8tab-uniform-ps-trx",
        "OLTP read-only in transactions",
    ),
    (
        "OLTP_RW_10M_8tab-uniform-ps-trx",
        "OLTP read-write, prepared",
    ),
    (
        "OLTP_RW_10M_8tab-uniform-trx",
        "OLTP read-write, not prepared",
    ),
    (
        "OLTP_RW_10M_8tab-uniform-upd_noidx1-notrx",
        "non-index updates",
    ),
    ("OLTP_RW_10M_8tab-uniform-upd_idx1-notrx", "index updates"),
    ("OLTP_RW_10M_8tab-uniform-upd_insdel1-trx", "write-only"),
    (
        "OLTP_RW_50M_8tab-uniform-ps-trx",
        "OLTP read-write on 50M-row tables",
    ),
    (
        "OLTP_RW_10M_8tab-pareto-ps-trx",
        "OLTP read-write, pareto access",
    ),
    (
        "OLTP_RO_10M_8tab-uniform-ps-p_sel1-socket-notrx",
        "point selects through the UNIX socket",
    ),
    (
        "Prepare_TPCC_1000W-InnoDB-NoFK",
        "TPC-C, one set of 1000 warehouses, no foreign keys",
    ),
    (
        "Prepare_TPCC_10x100W-InnoDB-NoFK",
        "TPC-C, 10 sets of 100 warehouses, no foreign keys",
    ),
    (
        "Prepare_TPCC_1000W-NULL-InnoDB-NoFK",
        "TPC-C with NULL columns",
    ),
    (
        "Prepare_TPCC_1000W-InnoDB-NoFK2",
        "TPC-C without FKs and without FK indexes",
    ),
    ("TPCC_1000W", "TPC-C run on 1000 warehouses"),
    ("TPCC_10x100W", "TPC-C run on 10 sets of 100 warehouses"),
    ("TPCC_1000W-NULL", "TPC-C run on the NULL variant"),
    ("Prepare_dbSTRESS_10M-InnoDB", "dbSTRESS, 10M objects"),
    (
        "Prepare_dbSTRESS_10x1M-InnoDB",
        "dbSTRESS, 10 sets of 1M objects",
    ),
    (
        "Prepare_dbSTRESS_10M-InnoDB-HPK",
        "dbSTRESS with HISTORY primary key",
    ),
    ("dbSTRESS_10M-RO-notrx", "read-only, SEL1 and SEL2"),
    ("dbSTRESS_10M-RO-SEL1-notrx", "read-only, SEL1"),
    ("dbSTRESS_10M-RO-SEL2-notrx", "read-only, SEL2"),
    ("dbSTRESS_10M-RW1-trx", "read+write 1:1"),
    ("dbSTRESS_10M-RW10-trx", "read+write 10:1"),
    (
        "dbSTRESS_10M-RW1-UPD-trx",
        "read+write 1:1, writes are updates",
    ),
    (
        "dbSTRESS_10M-RW10-UPD-trx",
        "read+write 10:1, writes are updates",
    ),
    (
        "dbSTRESS_10M-RW1-xDEAD-trx",
        "read+write 1:1 without anti-deadlock slices",
    ),
    (
        "dbSTRESS_10M-RW1-xREF-trx",
        "read+write 1:1 without same-reference groups",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn line(name: &str, users: u32, secs: u64) -> String {
        parse(name)
            .unwrap()
            .args(users, secs, DEFAULT_SOCKET, &[])
            .join(" ")
    }

    #[test]
    fn oltp_names_become_command_lines() {
        assert_eq!(
            line("sb11-OLTP_RW_10M_8tab-uniform-ps-trx.sh", 64, 300),
            "oltp_read_write --tables=8 --table-size=10000000 --rand-type=uniform --db-ps-mode=auto --threads=64 --time=300 --report-interval=1 run"
        );
        assert_eq!(
            line("OLTP_RO_10M_8tab-uniform-ps-p_sel1-notrx", 1, 10),
            "oltp_point_select --tables=8 --table-size=10000000 --rand-type=uniform --db-ps-mode=auto --threads=1 --time=10 --report-interval=1 run"
        );
        assert_eq!(
            line("OLTP_RO_10M_8tab-uniform-p_sel1-reconnect-notrx", 2, 5),
            "OLTP_RO-point_selects_reconnect --tables=8 --table-size=10000000 --rand-type=uniform --db-ps-mode=disable --skip-trx=on --threads=2 --time=5 --report-interval=1 run"
        );
        assert_eq!(
            line("OLTP_RW_50M_1tab-pareto-upd_idx1-trx-socket", 4, 5),
            "oltp_write_only --tables=1 --table-size=50000000 --rand-type=pareto --db-ps-mode=disable --non-index-updates=0 --delete-inserts=0 --mysql-socket=/run/mysqld/mysqld.sock --threads=4 --time=5 --report-interval=1 run"
        );
        assert_eq!(
            line("OLTP_RO_10M_8tab-uniform-notrx", 4, 5),
            "oltp_read_only --tables=8 --table-size=10000000 --rand-type=uniform --db-ps-mode=disable --skip-trx=on --threads=4 --time=5 --report-interval=1 run"
        );
        assert_eq!(
            parse("Prepare_10M_8tab-InnoDB").unwrap().args(32, 0, DEFAULT_SOCKET, &["--mysql-ssl=REQUIRED".into()]).join(" "),
            "oltp_read_write --tables=8 --table-size=10000000 --mysql-storage-engine=innodb --threads=32 --mysql-ssl=REQUIRED prepare"
        );
    }

    #[test]
    fn tpcc_and_dbstress_names() {
        assert_eq!(
            line("TPCC_10x100W", 8, 60),
            "tpcc --tables=10 --scale=100 --threads=8 --time=60 --report-interval=1 run"
        );
        assert_eq!(
            line("Prepare_TPCC_1000W-NULL-InnoDB-NoFK2", 32, 0),
            "tpcc --tables=1 --scale=1000 --force-null=1 --mysql-storage-engine=innodb --use-fk=2 --threads=32 prepare"
        );
        assert_eq!(
            line("dbSTRESS_10M-RW10-UPD-xDEAD-trx", 16, 30),
            "dbstress --obj-tables=1 --obj-table-size=10000000 --scenario=RW10-UPD-xDEAD-trx --threads=16 --time=30 --report-interval=1 run"
        );
        assert_eq!(
            line("Prepare_dbSTRESS_10x1M-InnoDB-HPK", 32, 0),
            "dbstress --obj-tables=10 --obj-table-size=1000000 --mysql-storage-engine=innodb --hpk=on --threads=32 prepare"
        );
    }

    #[test]
    fn every_catalog_name_parses() {
        for (name, _) in CATALOG {
            let s = parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(
                s.action == Action::Prepare,
                name.starts_with("Prepare_"),
                "{name}"
            );
        }
    }

    #[test]
    fn bad_tokens_are_named_with_the_valid_ones() {
        let e = |n: &str| parse(n).unwrap_err().to_string();
        assert_eq!(
            e("OLTP_RW_10M_8tab-unifrom-ps-trx"),
            "scenario 'OLTP_RW_10M_8tab-unifrom-ps-trx': unknown token 'unifrom' after OLTP_RW_10M_8tab (valid: uniform, pareto, zipfian, gaussian, special, ps, p_sel1, upd_noidx1, upd_idx1, upd_insdel1, reconnect, socket, trx, notrx)"
        );
        assert!(e("OLTP_XX_10M_8tab")
            .contains("'OLTP_XX_10M_8tab' is not a scenario (a name starts with one of: OLTP_RO_"));
        assert!(e("OLTP_RW_10Q_8tab")
            .contains("'10Q_8tab' is not a data set size (expected <rows>_<N>tab"));
        assert!(
            e("OLTP_RW_10M_8tab-p_sel1").contains("token 'p_sel1' belongs to OLTP_RO, not OLTP_RW")
        );
        assert!(e("OLTP_RO_10M_8tab-upd_idx1")
            .contains("token 'upd_idx1' belongs to OLTP_RW, not OLTP_RO"));
        assert!(e("OLTP_RO_10M_8tab-uniform-pareto")
            .contains("token 'pareto' repeats the random distribution already given ('uniform')"));
        assert!(e("OLTP_RO_10M_8tab-reconnect").contains("token 'reconnect' needs p_sel1"));
        assert!(e("OLTP_RO_10M_8tab--ps").contains("empty token"));
        assert!(e("TPCC_100").contains("'100' is not a TPC-C size"));
        assert!(e("TPCC_1000W-NoFK")
            .contains("unknown token 'NoFK' after TPCC_1000W (valid: NULL, socket)"));
        assert!(e("Prepare_TPCC_1000W-InnoDB-FK3")
            .contains("unknown token 'FK3' after TPCC_1000W (valid: NULL, NoFK, NoFK2, InnoDB"));
        assert!(e("dbSTRESS_10M-notrx").contains("a dbSTRESS run names its mode: RO or RW<n>"));
        assert!(e("dbSTRESS_10M-RW0-trx")
            .contains("unknown token 'RW0' after dbSTRESS_10M (valid: RO, RW<n>, SEL1"));
        assert!(e("dbSTRESS_10M-RO-UPD").contains("token 'UPD' needs a read-write mode"));
        assert!(e("dbSTRESS_1x-RO").contains("'1x' is not a dbSTRESS size"));
        assert!(e("Prepare_dbSTRESS_10M-HPK-Foo").contains("unknown token 'Foo' after dbSTRESS_10M (valid: InnoDB, MyISAM, RocksDB, Aria, MEMORY, HPK)"));
        assert!(e("Prepare_10M_8tab-InnoDB-x").contains("unknown token 'x' after Prepare_10M_8tab (valid: InnoDB, MyISAM, RocksDB, Aria, MEMORY)"));
        assert!(e("Prepare_foo").contains("'Prepare_foo' is not a data set"));
    }
}
