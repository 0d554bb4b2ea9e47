//! The headless core: worker-protocol requests as JSON lines on stdin, each request's events
//! and then its response as JSON lines on stdout (see `draftsmith::headless`).
//!
//! ```sh
//! printf '%s\n' '{"id":1,"type":"hello"}' | cargo run --example core
//! cargo run --example core -- --store novel.json < requests.jsonl
//! ```

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let status = draftsmith::headless::run_cli(
        std::env::args().skip(1),
        stdin.lock(),
        stdout.lock(),
        std::io::stderr(),
    );
    std::process::ExitCode::from(status)
}

/// The headless core is native only; on wasm32 there is nothing to run.
#[cfg(target_arch = "wasm32")]
fn main() {}
