//! The comparison statistics against scipy's (`tests/data/stats_expected.py` wrote the
//! expected values with `scipy.stats.ttest_ind(equal_var=False)` on the logs and
//! `scipy.stats.mannwhitneyu`).
use bmk_analysis::stats::{mann_whitney, welch};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

#[test]
fn welch_and_mann_whitney_match_scipy() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/stats_expected.json"
    ))
    .unwrap();
    let cases: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = cases.as_object().unwrap();
    assert_eq!(cases.len(), 6);
    for (name, c) in cases {
        let v = |k: &str| c[k].as_f64().unwrap();
        let list = |k: &str| {
            c[k].as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect::<Vec<f64>>()
        };
        let (a, b) = (list("a"), list("b"));
        let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
        let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
        let w = welch(&la, &lb).unwrap();
        assert!(
            close(w.t, v("welch_t"), 1e-9),
            "{name}: t {} vs {}",
            w.t,
            v("welch_t")
        );
        assert!(
            close(w.df, v("welch_df"), 1e-9),
            "{name}: df {} vs {}",
            w.df,
            v("welch_df")
        );
        assert!(
            close(w.p, v("welch_p"), 1e-6),
            "{name}: p {} vs {}",
            w.p,
            v("welch_p")
        );
        let ci = list("welch_ci");
        assert!(
            close(w.ci.0, ci[0], 1e-6) && close(w.ci.1, ci[1], 1e-6),
            "{name}: ci {:?} vs {ci:?}",
            w.ci
        );
        let m = mann_whitney(&a, &b).unwrap();
        assert_eq!(m.u, v("mw_u"), "{name}: U");
        assert!(
            close(m.p, v("mw_p"), 1e-9),
            "{name}: MW p {} vs {}",
            m.p,
            v("mw_p")
        );
    }
}

#[test]
fn too_few_samples_give_no_test() {
    assert!(welch(&[1.0], &[1.0, 2.0]).is_none());
    assert!(mann_whitney(&[], &[1.0]).is_none());
}
