//! What the built-in workloads accept of their own options beyond the type the scripts
//! declare: the ranges of numeric options and the shape of `--sync-file`. The scripts
//! declare types and defaults the sysbench way (which has no ranges); the CLI applies
//! these limits when it runs a built-in workload by name.

use bmk_engine::options::{OptSpec, OptionSet};

/// The most tables a built-in workload may be asked for: each is a table (and an index)
/// on the server and a set of prepared statements on every connection.
pub const MAX_TABLES: f64 = 1e6;

/// `spec`, a declaration of a built-in workload's script, with its range.
pub fn with_limits(spec: OptSpec) -> OptSpec {
    match spec.key().as_str() {
        "tables" => spec.with_range(1.0, MAX_TABLES),
        _ => spec,
    }
}

/// Checks what ranges cannot say: `--sync-file` is an absolute path, since the
/// controller that removes it runs in a directory of its own; a relative name would
/// leave the run waiting for ever.
pub fn check(opts: &OptionSet) -> Result<(), String> {
    if let Some(file) = opts.string("sync-file") {
        if !file.is_empty() && !std::path::Path::new(&file).is_absolute() {
            return Err(format!(
                "invalid value '{file}' for option --sync-file: expected an absolute path"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bmk_engine::options::OptKind;

    #[test]
    fn tables_get_a_range_and_sync_file_must_be_absolute() {
        let spec = with_limits(OptSpec::new("tables", OptKind::Int, Some("1"), ""));
        assert!(spec.parse("0").is_err());
        assert!(spec.parse("1000001").is_err());
        assert!(spec.parse("8").is_ok());
        let mut opts = OptionSet::new();
        opts.declare([OptSpec::new("sync_file", OptKind::String, Some(""), "")]);
        assert!(check(&opts).is_ok());
        opts.set("sync-file", "/tmp/gate").unwrap();
        assert!(check(&opts).is_ok());
        opts.set("sync-file", "gate").unwrap();
        assert!(check(&opts).unwrap_err().contains("absolute"));
    }
}
