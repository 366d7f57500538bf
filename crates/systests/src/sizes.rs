//! How header and progress lines spell byte sizes (`1KiB`, `1.6667MiB`, `16KiB`).
//!
//! Only wording lives here; parsing sizes from options is the engine's job.

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

/// Whole kibibytes, rounded down: `1KiB`, `0KiB` for 8 bytes (sysbench's wording).
pub(crate) fn kib(bytes: u64) -> String {
    format!("{}KiB", bytes / KIB)
}

/// Whole mebibytes, rounded down: `102400MiB` for 100G.
pub(crate) fn whole_mib(bytes: u64) -> String {
    format!("{}MiB", bytes / MIB)
}

/// The largest unit (B, KiB, MiB, GiB) that keeps the number at least 1, with up to
/// four decimals and no trailing zeros: `16KiB`, `1.6667MiB`, `2GiB`.
pub fn human(bytes: u64) -> String {
    let (div, unit) = if bytes >= 1 << 30 {
        (1u64 << 30, "GiB")
    } else if bytes >= MIB {
        (MIB, "MiB")
    } else if bytes >= KIB {
        (KIB, "KiB")
    } else {
        (1, "B")
    };
    let text = format!("{:.4}", bytes as f64 / div as f64);
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(kib(1024), "1KiB");
        assert_eq!(kib(8), "0KiB");
        assert_eq!(whole_mib(100 << 30), "102400MiB");
        assert_eq!(human(16384), "16KiB");
        assert_eq!(human(5 * MIB / 3), "1.6667MiB");
        assert_eq!(human(MIB), "1MiB");
        assert_eq!(human(2 << 30), "2GiB");
        assert_eq!(human(100), "100B");
    }
}
