//! Test and bench executables of this crate export their symbols (`-rdynamic`) so that
//! LuaJIT's `ffi.C` can resolve the `sb_*` entry points with `dlsym`, exactly as it does
//! in the `bmk` binary (which sets the same flag in its own build script).
fn main() {
    println!("cargo:rustc-link-arg-tests=-rdynamic");
    println!("cargo:rustc-link-arg-bins=-rdynamic");
    println!("cargo:rustc-link-arg-benches=-rdynamic");
    println!("cargo:rerun-if-changed=build.rs");
}
