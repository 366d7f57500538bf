//! `sysbench.sql` (spec 2 §5). Until the driver layer is linked in, `driver()` raises
//! "no SQL driver available" (defined by the prelude).

use mlua::{Lua, Table};

use crate::error::LuaError;
use crate::state::ScriptEnv;

/// Adds the Rust side of `sysbench.sql` to the prelude's `host` table.
pub(crate) fn install(_lua: &Lua, _host: &Table, _env: &ScriptEnv) -> Result<(), LuaError> {
    Ok(())
}
