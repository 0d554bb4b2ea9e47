//! Prints the tool catalog as JSON.
//!
//! ```sh
//! cargo run --example catalog -- --format openai|anthropic|gemini [--toolset all|voice_safe|quick]
//! cargo run --example catalog -- --names [--toolset ...]   # one line per tool: name, category
//! ```

use std::process::ExitCode;

use draftsmith::tools::{CatalogFormat, ToolRegistry, ALL};

fn main() -> ExitCode {
    let mut format = CatalogFormat::Openai;
    let mut toolset = ALL.to_string();
    let mut names = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--names" {
            names = true;
            continue;
        }
        let value = args.next();
        match (arg.as_str(), value) {
            ("--format", Some(v)) => match v.parse() {
                Ok(f) => format = f,
                Err(e) => return usage(&e),
            },
            ("--toolset", Some(v)) => toolset = v,
            (other, _) => return usage(&format!("unknown argument '{other}'")),
        }
    }
    let registry = ToolRegistry::standard();
    if names {
        return match registry.toolset(&toolset) {
            Ok(tools) => {
                for tool in tools {
                    let category = serde_json::to_value(tool.category).unwrap_or_default();
                    println!("{}\t{}", tool.name, category.as_str().unwrap_or(""));
                }
                ExitCode::SUCCESS
            }
            Err(e) => usage(&e.message),
        };
    }
    match registry.catalog(format, &toolset) {
        Ok(catalog) => {
            println!(
                "{}",
                serde_json::to_string_pretty(&catalog).unwrap_or_default()
            );
            ExitCode::SUCCESS
        }
        Err(e) => usage(&e.message),
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("catalog: {problem}");
    eprintln!(
        "usage: cargo run --example catalog -- [--format openai|anthropic|gemini | --names] [--toolset all|voice_safe|quick]"
    );
    ExitCode::from(2)
}
