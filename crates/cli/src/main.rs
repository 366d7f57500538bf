//! The `bmk` binary: a thin edge that maps the application's result to an exit code.
mod app;
mod args;
mod banner;
mod defs;
mod help;
mod lua_bench;
mod results;
mod results_dir;
mod runner;
mod settings;
mod signals;
mod start_barrier;
mod system_bench;
mod target_options;
mod verbosity;

fn main() {
    let invocation = app::Invocation::from_argv(std::env::args().collect());
    let code = match app::run(invocation) {
        Ok(code) => code,
        Err(err) => match err.downcast_ref::<app::UserError>() {
            Some(user) => {
                eprintln!("{}", user.message);
                user.code
            }
            None => {
                eprintln!("FATAL: {err:#}");
                1
            }
        },
    };
    std::process::exit(code);
}
