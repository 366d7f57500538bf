//! How a script's failure reads: bmk appends the Lua stack traceback that locates it;
//! invoked as `sysbench`, the message is what sysbench prints, which has none.

/// Where bmk's traceback starts in a failure message.
const TRACEBACK: &str = "\nstack traceback:\n";

/// `message` as printed: whole, or without its traceback when `as_sysbench`.
pub fn failure_text(message: &str, as_sysbench: bool) -> &str {
    match message.find(TRACEBACK) {
        Some(at) if as_sysbench => &message[..at],
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::failure_text;

    #[test]
    fn traceback_only_dropped_as_sysbench() {
        let m = "x.lua:3: boom\nstack traceback:\n\tx.lua:3: in main chunk";
        assert_eq!(failure_text(m, true), "x.lua:3: boom");
        assert_eq!(failure_text(m, false), m);
        assert_eq!(failure_text("plain", true), "plain");
    }
}
