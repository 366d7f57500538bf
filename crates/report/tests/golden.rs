//! Golden tests: every report format compared byte for byte with expected text, the
//! sysbench's documented example reports reproduced from numbers that yield them.

use bmk_engine::latency::new_histogram;
use bmk_engine::{Counter, Counters, CumulativeStats, IntervalStats, LagStats, ThreadTotals};
use bmk_report::{
    csv, final_text, histogram, json, text, CounterTotals, Cumulative, Fairness, FinalOptions,
    FinalStats, JsonIntervalArray, LagSummary, LatencySummary, Layout, LineOptions,
    PercentileValue, ReportConfig, ReportFormat, ReportStat, Reporter,
};

/// Compares with a readable diff on failure.
#[track_caller]
fn same(actual: &str, expected: &str) {
    if actual != expected {
        let mut msg = String::from("output differs:\n");
        for (i, (a, e)) in actual.lines().zip(expected.lines()).enumerate() {
            if a != e {
                msg.push_str(&format!("line {}:\n  got:  {a:?}\n  want: {e:?}\n", i + 1));
            }
        }
        msg.push_str(&format!("--- got ---\n{actual}--- want ---\n{expected}"));
        panic!("{msg}");
    }
}

fn line_opts(layout: Layout) -> LineOptions {
    LineOptions {
        layout,
        percentile: 95.0,
        time_decimals: 0,
        rate_mode: false,
    }
}

/// The example DB intermediate sample: 100 s worth of counts so rates have 2 decimals.
fn spec_db_stat() -> ReportStat {
    ReportStat {
        threads_running: 2,
        time_total: 1.0,
        time_interval: 100.0,
        events: 81_533_869,
        other: 1_630_679_087,
        latency_pct: 0.000_001,
        ..ReportStat::default()
    }
}

/// The example DB final report's numbers.
fn spec_db_final() -> FinalStats {
    let eps = 797_534.125_1;
    FinalStats {
        time_total_s: 1_595_787.0 / eps,
        threads: 2,
        events: 1_595_787,
        events_per_sec: eps,
        counters: CounterTotals {
            other: 31_915_740,
            ..CounterTotals::default()
        },
        latency: LatencySummary {
            min_ms: 0.0011,
            avg_ms: 0.0022,
            max_ms: 3.41,
            sum_ms: 3556.39,
            percentiles: vec![PercentileValue {
                percentile: 95.0,
                ms: 0.0031,
            }],
        },
        fairness: Fairness {
            events_avg: 797_893.5,
            events_stddev: 62_053.5,
            time_avg_s: 1.7782,
            time_stddev_s: 0.0012,
        },
        lag: None,
    }
}

fn final_opts(layout: Layout) -> FinalOptions {
    FinalOptions {
        layout,
        percentile: 95.0,
        percentiles: Vec::new(),
        sysbench_1_0: false,
    }
}

mod intermediate_text {
    use super::*;

    #[test]
    fn db_line_matches_spec() {
        same(
            &text::intermediate(&spec_db_stat(), &line_opts(Layout::Db)),
            "[ 1s ] thds: 2 tps: 815338.69 qps: 16306790.87 (r/w/o: 0.00/0.00/16306790.87) lat (ms,95%): 0.00 err/s: 0.00 reconn/s: 0.00\n",
        );
    }

    #[test]
    fn events_line_matches_spec() {
        let stat = ReportStat {
            threads_running: 1,
            time_total: 1.0,
            time_interval: 100.0,
            events: 426_182,
            latency_pct: 0.000_23,
            ..ReportStat::default()
        };
        for layout in [
            Layout::Events,
            Layout::Cpu,
            Layout::Memory {
                block_size: 1024,
                transfers: true,
            },
        ] {
            same(
                &text::intermediate(&stat, &line_opts(layout)),
                "[ 1s ] thds: 1 eps: 4261.82 lat (ms,95%): 0.23\n",
            );
        }
    }

    fn fileio_stat() -> ReportStat {
        ReportStat {
            threads_running: 1,
            time_total: 1.0,
            time_interval: 100.0,
            bytes_read: 60_150_759_424,
            bytes_written: 40_099_962_880,
            other: 244_539,
            latency_pct: 0.000_007,
            ..ReportStat::default()
        }
    }

    #[test]
    fn fileio_line_matches_spec() {
        same(
            &text::intermediate(&fileio_stat(), &line_opts(Layout::FileIo)),
            "[ 1s ] reads: 573.64 MiB/s writes: 382.42 MiB/s fsyncs: 2445.39/s latency (ms,95%): 0.007\n",
        );
    }

    #[test]
    fn percentile_zero_keeps_the_latency_part() {
        // sysbench 1.0.20 prints `lat (ms,0%)` with the lowest latency; parsers of the
        // line expect the field.
        let mut o = line_opts(Layout::Db);
        o.percentile = 0.0;
        same(
            &text::intermediate(&spec_db_stat(), &o),
            "[ 1s ] thds: 2 tps: 815338.69 qps: 16306790.87 (r/w/o: 0.00/0.00/16306790.87) lat (ms,0%): 0.00 err/s: 0.00 reconn/s: 0.00\n",
        );
        o.layout = Layout::Events;
        let stat = ReportStat {
            threads_running: 1,
            time_total: 3.0,
            time_interval: 1.0,
            events: 10,
            latency_pct: 0.000_04,
            ..ReportStat::default()
        };
        same(
            &text::intermediate(&stat, &o),
            "[ 3s ] thds: 1 eps: 10.00 lat (ms,0%): 0.04\n",
        );
        o.layout = Layout::FileIo;
        same(
            &text::intermediate(&fileio_stat(), &o),
            "[ 1s ] reads: 573.64 MiB/s writes: 382.42 MiB/s fsyncs: 2445.39/s latency (ms,0%): 0.007\n",
        );
    }

    #[test]
    fn other_percentiles_label() {
        let mut o = line_opts(Layout::Events);
        o.percentile = 99.9;
        let stat = ReportStat {
            threads_running: 4,
            time_total: 2.0,
            time_interval: 1.0,
            events: 7,
            latency_pct: 0.0125,
            ..ReportStat::default()
        };
        same(
            &text::intermediate(&stat, &o),
            "[ 2s ] thds: 4 eps: 7.00 lat (ms,99.9%): 12.50\n",
        );
    }

    #[test]
    fn rate_mode_adds_queue_line() {
        let mut o = line_opts(Layout::Db);
        o.rate_mode = true;
        let mut stat = spec_db_stat();
        stat.queue_length = 3;
        stat.concurrency = 2;
        same(
            &text::intermediate(&stat, &o),
            "[ 1s ] thds: 2 tps: 815338.69 qps: 16306790.87 (r/w/o: 0.00/0.00/16306790.87) lat (ms,95%): 0.00 err/s: 0.00 reconn/s: 0.00\n\
             [ 1s ] queue length: 3, concurrency: 2\n",
        );
        o.layout = Layout::Events;
        let stat = ReportStat {
            threads_running: 1,
            time_total: 1.0,
            time_interval: 1.0,
            events: 100,
            latency_pct: 0.001,
            ..ReportStat::default()
        };
        same(
            &text::intermediate(&stat, &o),
            "[ 1s ] thds: 1 eps: 100.00 lat (ms,95%): 1.00\n[ 1s ] queue length: 0 concurrency: 0\n",
        );
    }

    #[test]
    fn sub_second_intervals_show_decimals() {
        let mut o = LineOptions::new(Layout::Events, 95.0, 0.25, false);
        let mut stat = ReportStat {
            threads_running: 1,
            time_total: 0.250_3,
            time_interval: 0.25,
            events: 1000,
            latency_pct: 0.000_25,
            ..ReportStat::default()
        };
        same(
            &text::intermediate(&stat, &o),
            "[ 0.25s ] thds: 1 eps: 4000.00 lat (ms,95%): 0.25\n",
        );
        stat.time_total = 1.0001;
        same(
            &text::intermediate(&stat, &o),
            "[ 1.00s ] thds: 1 eps: 4000.00 lat (ms,95%): 0.25\n",
        );
        o = LineOptions::new(Layout::Events, 95.0, 1.5, false);
        stat.time_total = 3.0;
        stat.time_interval = 1.5;
        same(
            &text::intermediate(&stat, &o),
            "[ 3.0s ] thds: 1 eps: 666.67 lat (ms,95%): 0.25\n",
        );
        o = LineOptions::new(Layout::Events, 95.0, 2.0, false);
        same(
            &text::intermediate(&stat, &o),
            "[ 3s ] thds: 1 eps: 666.67 lat (ms,95%): 0.25\n",
        );
    }

    #[test]
    fn empty_interval_prints_zeros() {
        let stat = ReportStat {
            threads_running: 8,
            time_total: 5.0,
            ..ReportStat::default()
        };
        same(
            &text::intermediate(&stat, &line_opts(Layout::Db)),
            "[ 5s ] thds: 8 tps: 0.00 qps: 0.00 (r/w/o: 0.00/0.00/0.00) lat (ms,95%): 0.00 err/s: 0.00 reconn/s: 0.00\n",
        );
    }
}

mod intermediate_csv_json {
    use super::*;

    fn stat() -> ReportStat {
        ReportStat {
            threads_running: 4,
            time_total: 2.0,
            time_interval: 2.0,
            events: 2000,
            reads: 28_000,
            writes: 8_000,
            other: 4_000,
            errors: 3,
            reconnects: 1,
            latency_pct: 0.012_34,
            ..ReportStat::default()
        }
    }

    #[test]
    fn csv_line() {
        same(
            &csv::intermediate(&stat(), 0),
            "2,4,1000.00,20000.00,14000.00,4000.00,2000.00,12.34,1.50,0.50\n",
        );
        same(
            &csv::intermediate(&spec_db_stat(), 0),
            "1,2,815338.69,16306790.87,0.00,0.00,16306790.87,0.00,0.00,0.00\n",
        );
        let mut s = stat();
        s.time_total = 0.5;
        same(
            &csv::intermediate(&s, 1),
            "0.5,4,1000.00,20000.00,14000.00,4000.00,2000.00,12.34,1.50,0.50\n",
        );
    }

    #[test]
    fn json_array_of_objects() {
        let mut arr = JsonIntervalArray::new();
        assert_eq!(arr.close(), "");
        let a = arr.element(&stat(), 0);
        let mut s2 = stat();
        s2.time_total = 4.0;
        let b = arr.element(&s2, 0);
        let end = arr.close();
        same(
            &a,
            "[{\"time\":2,\"threads\":4,\"tps\":1000.00,\"qps\":{\"total\":20000.00,\"reads\":14000.00,\"writes\":4000.00,\"other\":2000.00},\"latency\":12.34,\"errors\":1.50,\"reconnects\":0.50}\n",
        );
        assert!(b.starts_with(",{\"time\":4,"));
        assert_eq!(end, "]\n");
        let whole = format!("{a}{b}{end}");
        let v: serde_json::Value = serde_json::from_str(&whole).unwrap();
        assert_eq!(v.as_array().unwrap().len(), 2);
        assert_eq!(v[1]["qps"]["reads"], serde_json::json!(14000.0));
        assert_eq!(arr.close(), "");
    }
}

mod final_reports {
    use super::*;

    #[test]
    fn db_matches_spec_example() {
        same(
            &final_text::render(&spec_db_final(), &final_opts(Layout::Db)),
            "\
SQL statistics:
    queries performed:
        read:                            0
        write:                           0
        other:                           31915740
        total:                           31915740
    transactions:                        1595787 (797534.13 per sec.)
    queries:                             31915740 (15950682.50 per sec.)
    ignored errors:                      0      (0.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Throughput:
    events/s (eps):                      797534.1251
    time elapsed:                        2.0009s
    total number of events:              1595787

Latency (ms):
         min:                                    0.00
         avg:                                    0.00
         max:                                    3.41
         95th percentile:                        0.00
         sum:                                 3556.39

Threads fairness:
    events (avg/stddev):           797893.5000/62053.50
    execution time (avg/stddev):   1.7782/0.00

",
        );
    }

    #[test]
    fn extra_percentiles_and_lag() {
        let mut s = spec_db_final();
        s.latency.percentiles = [50.0, 95.0, 99.0, 99.9, 100.0]
            .iter()
            .map(|&p| PercentileValue {
                percentile: p,
                ms: p / 30.0,
            })
            .collect();
        s.lag = Some(LagSummary {
            mean_ms: 0.125,
            max_ms: 12_345.678,
            dropped_arrivals: 4_194_304,
        });
        let o = FinalOptions {
            layout: Layout::Events,
            percentile: 95.0,
            percentiles: vec![50.0, 99.0, 99.9, 100.0],
            sysbench_1_0: false,
        };
        same(
            &final_text::render(&s, &o),
            "\n\
Throughput:
    events/s (eps):                      797534.1251
    time elapsed:                        2.0009s
    total number of events:              1595787

Latency (ms):
         min:                                    0.00
         avg:                                    0.00
         max:                                    3.41
         50th percentile:                        1.67
         95th percentile:                        3.17
         99th percentile:                        3.30
        99.9th percentile:                       3.33
        100th percentile:                        3.33
         sum:                                 3556.39

Schedule lag (ms):
         mean lag:                               0.12
         max lag:                            12345.68
         dropped arrivals (queue full):       4194304

Threads fairness:
    events (avg/stddev):           797893.5000/62053.50
    execution time (avg/stddev):   1.7782/0.00

",
        );
    }

    #[test]
    fn percentile_zero_says_percentiles_are_disabled() {
        let mut o = final_opts(Layout::Events);
        o.percentile = 0.0;
        let out = final_text::render(&spec_db_final(), &o);
        assert!(out.contains(
            "         max:                                    3.41\n         percentile stats:               disabled\n         sum:"
        ), "{out}");
        // Percentiles asked for with --percentiles are shown instead.
        o.percentiles = vec![99.0];
        let out = final_text::render(&spec_db_final(), &o);
        assert!(!out.contains("disabled"), "{out}");
        assert!(out.contains("         99th percentile:"), "{out}");
    }

    fn small() -> FinalStats {
        FinalStats {
            time_total_s: 10.0007,
            threads: 1,
            events: 42_620,
            events_per_sec: 42_620.0 / 10.0007,
            counters: CounterTotals::default(),
            latency: LatencySummary {
                min_ms: 0.22,
                avg_ms: 0.2346,
                max_ms: 1.07,
                sum_ms: 9998.36,
                percentiles: vec![PercentileValue {
                    percentile: 95.0,
                    ms: 0.23,
                }],
            },
            fairness: Fairness {
                events_avg: 42_620.0,
                events_stddev: 0.0,
                time_avg_s: 9.9984,
                time_stddev_s: 0.0,
            },
            lag: None,
        }
    }

    const SMALL_TAIL: &str = "\
Throughput:
    events/s (eps):                      4261.7017
    time elapsed:                        10.0007s
    total number of events:              42620

Latency (ms):
         min:                                    0.22
         avg:                                    0.23
         max:                                    1.07
         95th percentile:                        0.23
         sum:                                 9998.36

Threads fairness:
    events (avg/stddev):           42620.0000/0.00
    execution time (avg/stddev):   9.9984/0.00

";

    #[test]
    fn cpu() {
        same(
            &final_text::render(&small(), &final_opts(Layout::Cpu)),
            &format!("CPU speed:\n    events per second:  4261.70\n\n{SMALL_TAIL}"),
        );
    }

    #[test]
    fn cpu_speed_matches_spec_example() {
        let mut s = small();
        s.events_per_sec = 4261.82;
        let out = final_text::render(&s, &final_opts(Layout::Cpu));
        assert!(
            out.starts_with("CPU speed:\n    events per second:  4261.82\n\nThroughput:\n"),
            "{out}"
        );
    }

    #[test]
    fn threads_and_mutex_are_plain() {
        same(
            &final_text::render(&small(), &final_opts(Layout::Events)),
            &format!("\n{SMALL_TAIL}"),
        );
    }

    #[test]
    fn memory() {
        let layout = Layout::Memory {
            block_size: 1024,
            transfers: true,
        };
        same(
            &final_text::render(&small(), &final_opts(layout)),
            &format!(
                "Total operations: 42620 ( 4261.70 per second)\n\n41.62 MiB transferred (4.16 MiB/sec)\n\n\n{SMALL_TAIL}"
            ),
        );
        let layout = Layout::Memory {
            block_size: 1024,
            transfers: false,
        };
        same(
            &final_text::render(&small(), &final_opts(layout)),
            &format!("Total operations: 42620 ( 4261.70 per second)\n\n\n{SMALL_TAIL}"),
        );
    }

    #[test]
    fn fileio_matches_spec_example() {
        let s = FinalStats {
            time_total_s: 100.0,
            threads: 1,
            events: 0,
            events_per_sec: 0.0,
            counters: CounterTotals {
                reads: 3_674_866,
                writes: 2_449_927,
                other: 245_068,
                bytes_read: 60_209_233_920,
                bytes_written: 40_139_782_554,
                ..CounterTotals::default()
            },
            latency: LatencySummary {
                min_ms: 0.0,
                avg_ms: 0.0327,
                max_ms: 14.91,
                sum_ms: 199_580.32,
                percentiles: vec![PercentileValue {
                    percentile: 95.0,
                    ms: 0.104,
                }],
            },
            ..FinalStats::default()
        };
        same(
            &final_text::render(&s, &final_opts(Layout::FileIo)),
            "\
\nThroughput:
         read:  IOPS=36748.66 574.20 MiB/s (602.09 MB/s)
         write: IOPS=24499.27 382.80 MiB/s (401.40 MB/s)
         fsync: IOPS=2450.68

Latency (ms):
         min:                                    0.00
         avg:                                    0.03
         max:                                   14.91
         95th percentile:                        0.10
         sum:                               199580.32

",
        );
    }

    #[test]
    fn checkpoint_is_prefixed() {
        let out = final_text::checkpoint(10.0003, 0, &small(), &final_opts(Layout::Events));
        same(&out, &format!("[ 10s ] Checkpoint report:\n\n{SMALL_TAIL}"));
    }

    #[test]
    fn csv_final() {
        let mut s = small();
        s.lag = Some(LagSummary {
            mean_ms: 0.5,
            max_ms: 2.0,
            dropped_arrivals: 0,
        });
        same(
            &csv::cumulative(&Cumulative::Final, &s, &final_opts(Layout::Events)),
            "report,at_s,time_s,threads,events,events_per_s,reads,writes,other,queries,queries_per_s,errors,errors_per_s,reconnects,reconnects_per_s,bytes_read,bytes_written,lat_min_ms,lat_avg_ms,lat_max_ms,lat_p95_ms,lat_sum_ms,fairness_events_avg,fairness_events_stddev,fairness_time_avg_s,fairness_time_stddev_s,lag_mean_ms,lag_max_ms\n\
             final,,10.0007,1,42620,4261.7017,0,0,0,0,0.0000,0,0.0000,0,0.0000,0,0,0.220000,0.234600,1.070000,0.230000,9998.360000,42620.0000,0.0000,9.9984,0.0000,0.500000,2.000000\n",
        );
        let cp = Cumulative::Checkpoint {
            at: 10.0,
            time_decimals: 0,
        };
        let out = csv::cumulative(&cp, &small(), &final_opts(Layout::Events));
        assert!(out
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("checkpoint,10.0000,10.0007,"));
        assert!(out.lines().nth(1).unwrap().ends_with(",0.0000,,"));
    }

    #[test]
    fn json_final() {
        same(
            &json::cumulative(&Cumulative::Final, &small()),
            "{\"report\":\"final\",\"at_s\":null,\"time_total_s\":10.0007,\"threads\":1,\"events\":42620,\"events_per_sec\":4261.701680882338,\"counters\":{\"reads\":0,\"writes\":0,\"other\":0,\"transactions\":0,\"errors\":0,\"reconnects\":0,\"bytes_read\":0,\"bytes_written\":0},\"latency\":{\"min_ms\":0.22,\"avg_ms\":0.2346,\"max_ms\":1.07,\"sum_ms\":9998.36,\"percentiles\":[{\"percentile\":95.0,\"ms\":0.23}]},\"fairness\":{\"events_avg\":42620.0,\"events_stddev\":0.0,\"time_avg_s\":9.9984,\"time_stddev_s\":0.0}}\n",
        );
        let cp = Cumulative::Checkpoint {
            at: 20.0,
            time_decimals: 0,
        };
        let v: serde_json::Value = serde_json::from_str(&json::cumulative(&cp, &small())).unwrap();
        assert_eq!(v["report"], "checkpoint");
        assert_eq!(v["at_s"], 20.0);
    }
}

mod histogram_text {
    use super::*;

    #[test]
    fn rows_are_log_buckets_with_bars() {
        let mut h = new_histogram();
        h.record_n(219_500, 41).unwrap(); // 0.2195 ms
        h.record_n(223_100, 2046).unwrap();
        h.record_n(1_000_000, 1023).unwrap();
        h.record_n(57_300_000, 1).unwrap();
        same(
            &histogram::render(&h),
            "\
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       0.218 |*                                        41
       0.222 |**************************************** 2046
       1.007 |********************                     1023
      56.839 |                                         1
 
",
        );
    }

    #[test]
    fn empty_histogram_has_only_its_title() {
        same(
            &histogram::render(&new_histogram()),
            "Latency histogram (values are in milliseconds)\n \n",
        );
    }
}

/// Engine statistics built by hand, through the [`Reporter`] the CLI uses.
mod reporter {
    use super::*;

    fn counters(pairs: &[(Counter, u64)]) -> Counters {
        let mut c = Counters::default();
        for &(k, v) in pairs {
            c.0[k as usize] = v;
        }
        c
    }

    fn interval(t: f64) -> IntervalStats {
        let mut h = new_histogram();
        h.record_n(2_000_000, 95).unwrap();
        h.record_n(9_000_000, 5).unwrap();
        IntervalStats {
            time_total: t,
            time_interval: 1.0,
            threads_running: 2,
            events: 100,
            counters: counters(&[
                (Counter::Read, 1400),
                (Counter::Write, 400),
                (Counter::Other, 200),
            ]),
            histogram: h,
            queue_length: 0,
            concurrency: 0,
            rate_mode: false,
        }
    }

    pub(crate) fn cumulative() -> CumulativeStats {
        let mut h = new_histogram();
        h.record_n(2_000_000, 190).unwrap();
        h.record_n(9_000_000, 10).unwrap();
        CumulativeStats {
            time_total: 2.0,
            events: 200,
            counters: counters(&[
                (Counter::Read, 2800),
                (Counter::Write, 800),
                (Counter::Other, 400),
                (Counter::Error, 2),
            ]),
            histogram: h,
            min_ns: 1_999_000,
            max_ns: 9_000_123,
            sum_ns: 190 * 2_000_000 + 10 * 9_000_000,
            threads: vec![
                ThreadTotals {
                    events: 110,
                    busy_ns: 1_300_000_000,
                },
                ThreadTotals {
                    events: 90,
                    busy_ns: 1_100_000_000,
                },
            ],
            lag: Some(LagStats {
                mean_ns: 1_500_000.0,
                max_ns: 4_000_000,
                dropped: 0,
            }),
        }
    }

    fn config(format: ReportFormat) -> ReportConfig {
        ReportConfig {
            format,
            layout: Layout::Db,
            percentile: 95.0,
            percentiles: vec![99.0],
            report_interval: 1.0,
            rate_mode: false,
        }
    }

    #[test]
    fn text_run() {
        let mut r = Reporter::new(&config(ReportFormat::Text));
        let mut out = Vec::new();
        r.interval(&mut out, &interval(1.0)).unwrap();
        r.checkpoint(&mut out, 2.0, &cumulative()).unwrap();
        r.final_report(&mut out, &cumulative()).unwrap();
        let out = String::from_utf8(out).unwrap();
        let expected_report = "\
SQL statistics:
    queries performed:
        read:                            2800
        write:                           800
        other:                           400
        total:                           4000
    transactions:                        200    (100.00 per sec.)
    queries:                             4000   (2000.00 per sec.)
    ignored errors:                      2      (1.00 per sec.)
    reconnects:                          0      (0.00 per sec.)

Throughput:
    events/s (eps):                      100.0000
    time elapsed:                        2.0000s
    total number of events:              200

Latency (ms):
         min:                                    2.00
         avg:                                    2.35
         max:                                    9.00
         95th percentile:                        2.00
         99th percentile:                        9.00
         sum:                                  470.00

Schedule lag (ms):
         mean lag:                               1.50
         max lag:                                4.00

Threads fairness:
    events (avg/stddev):           100.0000/10.00
    execution time (avg/stddev):   1.2000/0.10

";
        same(
            &out,
            &format!(
                "[ 1s ] thds: 2 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 2.00 err/s: 0.00 reconn/s: 0.00\n\
                 [ 2s ] Checkpoint report:\n{expected_report}{expected_report}"
            ),
        );
    }

    #[test]
    fn json_run_closes_the_array_before_reports() {
        let mut r = Reporter::new(&config(ReportFormat::Json));
        let mut out = Vec::new();
        r.interval(&mut out, &interval(1.0)).unwrap();
        r.interval(&mut out, &interval(2.0)).unwrap();
        r.final_report(&mut out, &cumulative()).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 4, "{out}");
        assert!(lines[0].starts_with("[{\"time\":1,"));
        assert!(lines[1].starts_with(",{\"time\":2,"));
        assert_eq!(lines[2], "]");
        let array: serde_json::Value = serde_json::from_str(&lines[..3].join("\n")).unwrap();
        assert_eq!(array[0]["latency"], serde_json::json!(2.0));
        let fin: serde_json::Value = serde_json::from_str(lines[3]).unwrap();
        assert_eq!(fin["report"], "final");
        assert_eq!(fin["events"], 200);
        assert_eq!(fin["latency"]["percentiles"][1]["percentile"], 99.0);
        assert_eq!(fin["lag"]["max_ms"], 4.0);
    }

    #[test]
    fn csv_run() {
        let mut r = Reporter::new(&config(ReportFormat::Csv));
        let mut out = Vec::new();
        r.interval(&mut out, &interval(1.0)).unwrap();
        r.histogram(&mut out, &cumulative().histogram).unwrap();
        r.final_report(&mut out, &cumulative()).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "1,2,100.00,2000.00,1400.00,400.00,200.00,2.00,0.00,0.00"
        );
        assert_eq!(lines[1], "value_ms,count");
        assert_eq!(lines[2], "1.995711,190");
        assert_eq!(lines[3], "9.057102,10");
        assert!(lines[4].starts_with("report,at_s,"));
        assert!(lines[4].contains(",lat_p95_ms,lat_p99_ms,"));
        assert!(lines[5]
            .starts_with("final,,2.0000,2,200,100.0000,2800,800,400,4000,2000.0000,2,1.0000,"));
    }

    #[test]
    fn text_histogram_through_reporter() {
        let mut r = Reporter::new(&config(ReportFormat::Text));
        let mut out = Vec::new();
        r.histogram(&mut out, &cumulative().histogram).unwrap();
        same(
            &String::from_utf8(out).unwrap(),
            "\
Latency histogram (values are in milliseconds)
       value  ------------- distribution ------------- count
       1.996 |**************************************** 190
       9.057 |**                                       10
 
",
        );
    }

    #[test]
    fn lua_cumulative_stat() {
        let s = ReportStat::from_cumulative(&cumulative(), 2, 95.0);
        assert_eq!(s.threads_running, 2);
        assert_eq!(s.time_interval, 2.0);
        assert_eq!(s.events, 200);
        assert_eq!(s.reads, 2800);
        assert_eq!(s.errors, 2);
        assert_eq!(s.latency_min, 0.001_999);
        assert_eq!(s.latency_max, 0.009_000_123);
        assert!((s.latency_avg - 0.00235).abs() < 1e-12);
        assert!((s.latency_sum - 0.47).abs() < 1e-12);
        assert!((s.latency_pct - 0.002).abs() < 1e-5);
        same(
            &text::intermediate(&s, &line_opts(Layout::Db)),
            "[ 2s ] thds: 2 tps: 100.00 qps: 2000.00 (r/w/o: 1400.00/400.00/200.00) lat (ms,95%): 2.00 err/s: 1.00 reconn/s: 0.00\n",
        );
    }

    #[test]
    fn rate_mode_interval_from_engine() {
        let mut cfg = config(ReportFormat::Text);
        cfg.layout = Layout::Events;
        let mut r = Reporter::new(&cfg);
        let mut stats = interval(3.0);
        stats.rate_mode = true;
        stats.queue_length = 17;
        stats.concurrency = 2;
        let mut out = Vec::new();
        r.interval(&mut out, &stats).unwrap();
        same(
            &String::from_utf8(out).unwrap(),
            "[ 3s ] thds: 2 eps: 100.00 lat (ms,95%): 2.00\n[ 3s ] queue length: 17 concurrency: 2\n",
        );
    }
}
