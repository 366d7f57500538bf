//! `cpu`, `memory`, `threads` and `mutex` driven through the engine.

mod common;

use bmk_engine::options::{OptKind, OptValue};
use bmk_systests::SystemTestKind;
use common::{bench, run_events, try_bench};

#[test]
fn every_test_is_found_by_name_with_its_commands() {
    for t in SystemTestKind::ALL {
        assert_eq!(SystemTestKind::by_name(t.name()), Some(t));
        assert!(t.commands().contains(&"run"));
        assert!(!t.description().is_empty());
    }
    assert_eq!(SystemTestKind::by_name("oltp_read_write"), None);
    assert_eq!(
        SystemTestKind::FileIo.commands(),
        ["prepare", "run", "cleanup"].as_slice()
    );
    assert_eq!(SystemTestKind::Cpu.commands(), ["run"].as_slice());
}

#[test]
fn option_defaults_follow_the_spec() {
    let expect: &[(SystemTestKind, &str, OptKind, Option<&str>)] = &[
        (
            SystemTestKind::Cpu,
            "cpu-max-prime",
            OptKind::Int,
            Some("10000"),
        ),
        (
            SystemTestKind::Memory,
            "memory-block-size",
            OptKind::Size,
            Some("1K"),
        ),
        (
            SystemTestKind::Memory,
            "memory-total-size",
            OptKind::Size,
            Some("100G"),
        ),
        (
            SystemTestKind::Memory,
            "memory-scope",
            OptKind::String,
            Some("global"),
        ),
        (
            SystemTestKind::Memory,
            "memory-hugetlb",
            OptKind::Bool,
            Some("off"),
        ),
        (
            SystemTestKind::Memory,
            "memory-oper",
            OptKind::String,
            Some("write"),
        ),
        (
            SystemTestKind::Memory,
            "memory-access-mode",
            OptKind::String,
            Some("seq"),
        ),
        (
            SystemTestKind::Threads,
            "thread-yields",
            OptKind::Int,
            Some("1000"),
        ),
        (
            SystemTestKind::Threads,
            "thread-locks",
            OptKind::Int,
            Some("8"),
        ),
        (
            SystemTestKind::Mutex,
            "mutex-num",
            OptKind::Int,
            Some("4096"),
        ),
        (
            SystemTestKind::Mutex,
            "mutex-locks",
            OptKind::Int,
            Some("50000"),
        ),
        (
            SystemTestKind::Mutex,
            "mutex-loops",
            OptKind::Int,
            Some("10000"),
        ),
        (
            SystemTestKind::FileIo,
            "file-num",
            OptKind::Int,
            Some("128"),
        ),
        (
            SystemTestKind::FileIo,
            "file-block-size",
            OptKind::Int,
            Some("16384"),
        ),
        (
            SystemTestKind::FileIo,
            "file-total-size",
            OptKind::Size,
            Some("2G"),
        ),
        (
            SystemTestKind::FileIo,
            "file-test-mode",
            OptKind::String,
            None,
        ),
        (
            SystemTestKind::FileIo,
            "file-io-mode",
            OptKind::String,
            Some("sync"),
        ),
        (
            SystemTestKind::FileIo,
            "file-async-backlog",
            OptKind::Int,
            Some("128"),
        ),
        (
            SystemTestKind::FileIo,
            "file-extra-flags",
            OptKind::List,
            Some(""),
        ),
        (
            SystemTestKind::FileIo,
            "file-fsync-freq",
            OptKind::Int,
            Some("100"),
        ),
        (
            SystemTestKind::FileIo,
            "file-fsync-all",
            OptKind::Bool,
            Some("off"),
        ),
        (
            SystemTestKind::FileIo,
            "file-fsync-end",
            OptKind::Bool,
            Some("on"),
        ),
        (
            SystemTestKind::FileIo,
            "file-fsync-mode",
            OptKind::String,
            Some("fsync"),
        ),
        (
            SystemTestKind::FileIo,
            "file-merged-requests",
            OptKind::Int,
            Some("0"),
        ),
        (
            SystemTestKind::FileIo,
            "file-rw-ratio",
            OptKind::Double,
            Some("1.5"),
        ),
    ];
    for (test, name, kind, default) in expect {
        let specs = test.options();
        let spec = specs
            .iter()
            .find(|s| s.name == *name)
            .unwrap_or_else(|| panic!("{name} not declared by {}", test.name()));
        assert_eq!(spec.kind, *kind, "{name}");
        assert_eq!(spec.default.as_deref(), *default, "{name}");
        assert!(!spec.help.is_empty(), "{name}");
        if let Some(d) = default {
            spec.parse(d)
                .unwrap_or_else(|e| panic!("default of {name}: {e}"));
        }
    }
    let total: usize = SystemTestKind::ALL.iter().map(|t| t.options().len()).sum();
    assert_eq!(total, expect.len(), "an option is missing from this table");
    let list = SystemTestKind::FileIo
        .options()
        .into_iter()
        .find(|s| s.name == "file-extra-flags")
        .unwrap();
    assert_eq!(
        list.parse("direct,sync").unwrap(),
        OptValue::List(vec!["direct".into(), "sync".into()])
    );
    assert!(list.parse("odd").is_err());
}

#[test]
fn cpu_runs_the_requested_events() {
    let b = bench("cpu", &[("cpu-max-prime", "2000")], 2, 40, None);
    assert_eq!(b.header_lines(), ["Prime numbers limit: 2000", ""]);
    assert_eq!(b.event_limit(), None);
    let stats = run_events(&b, 2, 40);
    assert_eq!(stats.events, 40);
    assert_eq!(stats.threads.iter().map(|t| t.events).sum::<u64>(), 40);
}

#[test]
fn cpu_rejects_zero() {
    let err = try_bench("cpu", &[("cpu-max-prime", "0")], 1, 0, None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.starts_with("invalid value '0' for option --cpu-max-prime"),
        "{err}"
    );
}

#[test]
fn cpu_has_no_prepare_or_cleanup() {
    let b = bench("cpu", &[], 1, 0, None);
    let mut out = Vec::new();
    assert_eq!(
        b.prepare(&mut out).unwrap_err().to_string(),
        "'cpu' test does not implement the 'prepare' command."
    );
    assert_eq!(
        b.cleanup(&mut out).unwrap_err().to_string(),
        "'cpu' test does not implement the 'cleanup' command."
    );
    assert!(out.is_empty());
}

#[test]
fn memory_transfers_total_size_in_blocks() {
    for scope in ["global", "local"] {
        for oper in ["read", "write", "none"] {
            for access in ["seq", "rnd"] {
                let b = bench(
                    "memory",
                    &[
                        ("memory-block-size", "4K"),
                        ("memory-total-size", "1M"),
                        ("memory-scope", scope),
                        ("memory-oper", oper),
                        ("memory-access-mode", access),
                    ],
                    2,
                    0,
                    None,
                );
                assert_eq!(b.event_limit(), Some(256));
                assert_eq!(b.memory_block_size(), Some(4096));
                let stats = run_events(&b, 2, b.event_limit().unwrap());
                assert_eq!(stats.events, 256, "{scope} {oper} {access}");
                assert_eq!(
                    stats.events * b.memory_block_size().unwrap(),
                    1 << 20,
                    "{scope} {oper} {access}"
                );
            }
        }
    }
}

/// Split per thread as sysbench splits it: each of 3 threads runs 1024 / 3 = 341
/// blocks and stops, the remaining block is never run; a share of 0 runs nothing.
#[test]
fn memory_shares_per_thread_drop_the_remainder() {
    let build = |threads: u32, total: &str| {
        let test = SystemTestKind::Memory;
        let mut opts = bmk_engine::options::OptionSet::new();
        opts.declare(test.options());
        opts.set("memory-block-size", "1K").unwrap();
        opts.set("memory-total-size", total).unwrap();
        bmk_systests::build(
            test,
            &opts,
            &bmk_systests::BuildParams {
                threads,
                memory_shares_per_thread: true,
                ..bmk_systests::BuildParams::default()
            },
        )
        .unwrap()
    };
    let b = build(3, "1M");
    // The threads stop themselves: no run-wide limit.
    assert_eq!(b.event_limit(), None);
    let stats = run_events(&b, 3, 0);
    assert_eq!(stats.events, 1023);
    let per_thread: Vec<u64> = stats.threads.iter().map(|t| t.events).collect();
    assert_eq!(per_thread, [341, 341, 341]);
    // 2 blocks for 3 threads: a share of 0 each.
    assert_eq!(run_events(&build(3, "2K"), 3, 0).events, 0);
}

#[test]
fn memory_header_names_block_total_operation_scope() {
    let b = bench("memory", &[("memory-scope", "local")], 1, 0, None);
    assert_eq!(
        b.header_lines(),
        [
            "Running memory speed test with the following options:",
            "  block size: 1KiB",
            "  total size: 102400MiB",
            "  operation: write",
            "  scope: local",
            "",
        ]
    );
    assert_eq!(b.event_limit(), Some(100 << 20));
}

#[test]
fn memory_rejects_block_sizes_that_are_not_powers_of_two() {
    for bad in ["3000", "24", "4"] {
        let err = try_bench("memory", &[("memory-block-size", bad)], 1, 0, None)
            .err()
            .unwrap_or_else(|| panic!("{bad} accepted"))
            .to_string();
        assert!(
            err.starts_with(&format!(
                "invalid value '{bad}' for option --memory-block-size: expected"
            )),
            "{err}"
        );
    }
    let err = try_bench(
        "memory",
        &[("memory-block-size", "8K"), ("memory-total-size", "4K")],
        1,
        0,
        None,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("--memory-total-size"), "{err}");
    let unlimited = bench("memory", &[("memory-total-size", "0")], 1, 0, None);
    assert_eq!(unlimited.event_limit(), None);
    assert!(try_bench("memory", &[("memory-scope", "galaxy")], 1, 0, None).is_err());
}

#[test]
fn memory_hugetlb_either_works_or_says_what_to_do() {
    match try_bench("memory", &[("memory-hugetlb", "on")], 1, 0, None) {
        Ok(b) => assert_eq!(run_events(&b, 1, 10).events, 10),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains("HugeTLB") && msg.contains("vm.nr_hugepages"),
                "{msg}"
            );
        }
    }
}

#[test]
fn threads_events_are_counted_per_thread() {
    let b = bench(
        "threads",
        &[("thread-yields", "20"), ("thread-locks", "2")],
        3,
        30,
        None,
    );
    assert!(b.header_lines().is_empty());
    let stats = run_events(&b, 3, 30);
    assert_eq!(stats.events, 30);
    assert_eq!(stats.threads.iter().map(|t| t.events).sum::<u64>(), 30);
}

#[test]
fn mutex_runs_exactly_one_event_per_thread() {
    let b = bench(
        "mutex",
        &[
            ("mutex-num", "8"),
            ("mutex-locks", "2000"),
            ("mutex-loops", "50"),
        ],
        3,
        0,
        None,
    );
    assert!(b.header_lines().is_empty());
    let stats = run_events(&b, 3, 0);
    assert_eq!(stats.events, 3);
    assert!(stats.threads.iter().all(|t| t.events == 1));
}
