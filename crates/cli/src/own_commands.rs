//! bmk's own commands (as `bmk`, never as `sysbench`): the list at the top of
//! `bmk --help`, `bmk help [COMMAND]`, `bmk version`, and the "did you mean" of a
//! mistyped command, test or option.

use bmk_engine::options::OptionSet;

/// One of bmk's own commands, with one example, for the top of `bmk --help`.
struct OwnCommand {
    name: &'static str,
    summary: &'static str,
    example: &'static str,
}

const OWN_COMMANDS: [OwnCommand; 6] = [
    OwnCommand {
        name: "kit",
        summary:
            "the benchmarking kit: named scenarios, prepares, runs, load sweeps with server capture",
        example: "bmk kit sweep OLTP_RW_500_2tab-trx --users=1,2,4 --time=60 --db-driver=sqlite",
    },
    OwnCommand {
        name: "report",
        summary: "writes an HTML report of a results directory and prints its summary",
        example: "bmk report bmk-home/results/20261128T090000Z-OLTP_RW_500_2tab-trx",
    },
    OwnCommand {
        name: "compare",
        summary: "compares two or more runs level by level, with a verdict per level",
        example: "bmk compare results/before results/after --fail-if-slower=5",
    },
    OwnCommand {
        name: "merge",
        summary: "merges the results of processes or hosts that ran at the same time",
        example: "bmk merge client1.json client2.json --results=all.json",
    },
    OwnCommand {
        name: "help",
        summary: "this text (also -h, --help); 'bmk help COMMAND' explains a command",
        example: "bmk help kit",
    },
    OwnCommand {
        name: "version",
        summary: "bmk's version (also -V, --version)",
        example: "bmk version",
    },
];

/// The top of `bmk --help`: bmk's own commands and programs, before the sysbench part.
pub fn overview() -> String {
    let mut text = String::from(
        "bmk: a sysbench-compatible database benchmark tool, with a kit for load sweeps and reports\n\nbmk's own commands ('bmk COMMAND --help' explains each one):\n",
    );
    for c in &OWN_COMMANDS {
        text.push_str(&format!(
            "  {:<9} {}\n            e.g. {}\n",
            c.name, c.summary, c.example
        ));
    }
    text.push_str(
        "\nAlso installed: bmk-null-server, a MySQL/PostgreSQL server that stores nothing and answers at once\n(client capacity, fault injection; see docs/null-server.md)\n            e.g. bmk-null-server --mysql-port 3307 --pgsql-port 5433\n",
    );
    text.push_str("\nAs sysbench (the same tests, options and output; invoked as 'sysbench', exactly sysbench):\n\n");
    text
}

/// What the first word of a bmk command line asks of bmk itself.
pub enum Request {
    /// `help`, `-h` (`help COMMAND`: that command's help).
    Help(Option<String>),
    /// `version`, `-V`.
    Version,
}

/// The request when `args` is one of bmk's own words for help or the version; the
/// long forms `--help` and `--version` are the sysbench grammar's own and handled there.
pub fn request(args: &[String]) -> Option<Request> {
    match args.first().map(String::as_str)? {
        "help" | "-h" if args.len() <= 2 => Some(Request::Help(args.get(1).cloned())),
        "version" | "-V" if args.len() == 1 => Some(Request::Version),
        _ => None,
    }
}

/// The help of `bmk COMMAND` for `bmk help COMMAND`.
pub fn help_of(command: &str) -> Option<String> {
    match command {
        "kit" => bmk_kit::args::help(None),
        other => crate::analysis_commands::help_of(other),
    }
}

/// The closest of `candidates` to `given`, when one is close enough to be the word
/// meant: a small edit distance relative to the word's length (one edit in a short
/// word, two in a longer one), or a known word the given one is a prefix of.
pub fn closest<'a>(given: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = if given.chars().count() <= 4 { 1 } else { 2 };
    candidates
        .into_iter()
        .filter(|c| *c != given)
        .map(|c| (strsim::damerau_levenshtein(given, c), c))
        .filter(|(d, c)| *d <= limit || (given.len() >= 3 && c.starts_with(given)))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// What a mistyped test or command name may have meant: one of bmk's commands, a
/// compiled-in test or a built-in workload.
pub fn command_suggestion(name: &str) -> Option<String> {
    let mut names: Vec<&str> = OWN_COMMANDS.iter().map(|c| c.name).collect();
    names.extend(bmk_systests::SystemTestKind::ALL.iter().map(|t| t.name()));
    names.extend(bmk_workloads::workload_names().iter().copied());
    closest(name, names).map(str::to_string)
}

/// What a mistyped option (`--tabels=4`, `tabels`) may have meant: a declared one.
pub fn option_suggestion(opts: &OptionSet, name: &str) -> Option<String> {
    let given = name.replace('_', "-");
    let names: Vec<String> = opts.specs().map(|s| s.name.replace('_', "-")).collect();
    closest(&given, names.iter().map(String::as_str)).map(|n| format!("--{n}"))
}

/// What a mistyped `--db-driver` value may have meant.
pub fn driver_suggestion(name: &str) -> Option<&'static str> {
    closest(
        &name.to_ascii_lowercase(),
        bmk_sql::DriverKind::ALL.iter().map(|k| k.name()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_words_are_suggested_and_far_ones_are_not() {
        assert_eq!(command_suggestion("repot").as_deref(), Some("report"));
        assert_eq!(command_suggestion("comapre").as_deref(), Some("compare"));
        assert_eq!(
            command_suggestion("oltp_read_wirte").as_deref(),
            Some("oltp_read_write")
        );
        assert_eq!(command_suggestion("frobnicate"), None);
        assert_eq!(driver_suggestion("sqlit"), Some("sqlite"));
        assert_eq!(driver_suggestion("pgsq"), Some("pgsql"));
        assert_eq!(driver_suggestion("oracle"), None);
    }

    #[test]
    fn help_and_version_words_are_requests_only_alone() {
        let v = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert!(matches!(request(&v("help")), Some(Request::Help(None))));
        assert!(matches!(request(&v("-h kit")), Some(Request::Help(Some(c))) if c == "kit"));
        assert!(matches!(request(&v("-V")), Some(Request::Version)));
        assert!(request(&v("version x")).is_none());
        assert!(request(&v("cpu help")).is_none());
    }
}
