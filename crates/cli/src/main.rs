//! The `bmk` binary: a thin edge that maps the application's result to an exit code.
mod analysis_commands;
mod app;
mod args;
mod banner;
mod benchmark;
mod compat;
mod defs;
mod execution;
mod help;
mod http_answer;
mod latency_buckets;
mod metrics_endpoint;
mod metrics_options;
mod metrics_push;
mod metrics_sink;
mod option_pipeline;
mod own_commands;
mod report_server;
mod results;
mod results_dir;
mod run_metrics;
mod run_settings;
mod run_verdict;
mod runner;
mod script_benchmark;
mod script_failure;
mod settings;
mod signals;
mod split_plan;
mod start_barrier;
mod sysbench_help;
mod sysbench_wording;
mod system_test_benchmark;
mod target_options;
mod user_error;
mod verbosity;

fn main() {
    let invocation = app::Invocation::from_argv(std::env::args().collect());
    let code = match app::run(invocation) {
        Ok(code) => code,
        Err(err) => match err.downcast_ref::<user_error::UserError>() {
            Some(user) if user.on_stdout => {
                println!("{}", user.message);
                user.code
            }
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
