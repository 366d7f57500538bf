#!/usr/bin/env python3
"""Writes stats_expected.json: scipy's Welch t test (on the logs) and Mann-Whitney U
for the samples below, the reference values of crates/analysis/tests/stats.rs.
Run by hand with scipy installed; the test reads only the JSON."""
import json, math, os
from scipy import stats

CASES = {
    "clear_gain": ([1012.5, 998.1, 1005.3, 1020.7, 990.2], [1105.9, 1121.4, 1098.7, 1130.2, 1110.0]),
    "no_difference": ([1012.5, 998.1, 1005.3, 1020.7, 990.2], [1009.0, 1001.2, 1015.5, 995.8, 1004.4]),
    "small_slower": ([2050.0, 2075.5, 2031.2, 2060.8], [1901.3, 1950.2, 1925.6, 1888.1]),
    "unequal_sizes": ([500.0, 512.0, 498.0, 505.0, 520.0, 490.0, 515.0], [530.0, 541.0, 525.0, 560.0, 538.0]),
    "ties": ([10.0, 11.0, 11.0, 12.0, 13.0, 13.0], [11.0, 13.0, 14.0, 14.0, 15.0, 16.0]),
    "large": ([100 + (i * 37 % 11) for i in range(12)], [104 + (i * 53 % 13) for i in range(10)]),
}

out = {}
for name, (a, b) in CASES.items():
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    w = stats.ttest_ind(lb, la, equal_var=False)
    ci = w.confidence_interval(0.95)
    mw = stats.mannwhitneyu(a, b, alternative="two-sided")
    out[name] = {
        "a": a, "b": b,
        "welch_t": float(w.statistic), "welch_df": float(w.df), "welch_p": float(w.pvalue),
        "welch_ci": [float(ci.low), float(ci.high)],
        "mw_u": float(mw.statistic), "mw_p": float(mw.pvalue),
    }
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stats_expected.json"), "w") as f:
    json.dump(out, f, indent=1)
