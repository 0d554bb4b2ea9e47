//! HTML extraction on saved real-world pages (from Mozilla Readability's test pages, see
//! tests/data/html/README.md): each page's title, key sentences of its main text in, and
//! navigation, script and boilerplate text out.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith_reader::extract;

fn page(name: &str) -> String {
    let path = format!("{}/tests/data/html/{name}.html", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path).unwrap()
}

/// `(page, title, sentences of the main text, text that must not be in it)`.
type Case = (
    &'static str,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

const CASES: &[Case] = &[
    // A news article.
    (
        "ars-1",
        "Just-released Minecraft exploit makes it easy to crash game servers",
        &[
            "A flaw in the wildly popular online game Minecraft makes it easy for just about anyone to",
            "And this isn’t even the theoretical maximum for this attack. Just the nbt data for this",
            "Ars is asking Mojang for comment and will update this post if company officials",
        ],
        &["googletag", "Privacy Policy", "Sign up", "Share"],
    ),
    // A wiki page.
    (
        "wikipedia",
        "Mozilla - Wikipedia",
        &[
            "Mozilla is a free-software community, created in 1998 by members of Netscape. The Mozilla",
            "Bugzilla is a web-based general-purpose bug tracking system, which was released as open",
            "Mozilla Summit are the global event with active contributors and Mozilla employees to",
        ],
        &["Donate to Wikipedia", "Personal tools", "Privacy policy", "window."],
    ),
    // A blog post.
    (
        "v8-blog",
        "standalone WebAssembly binaries using Emscripten · V8",
        &[
            "Emscripten has always focused first and foremost on compiling to the Web and other",
            "WebAssembly can only access the APIs it receives as imports - the core Wasm spec has no",
            "You may also find APIs that do have a non-JS replacement that we haven’t converted yet,",
        ],
        &["Twitter", "Home"],
    ),
    // A news page heavy with scripts, navigation and ads.
    (
        "herald-sun-1",
        "Angry media won’t buckle over new surveillance laws",
        &[
            "A new Bill would require telecommunications service providers to store so-called",
            "The media union is adamant journalists’ metadata must be exempted from the law. That’s",
            "Memories of the grief Conroy brought down on his head would undoubtedly make Abbott sit",
        ],
        &["window.", "var ", "Privacy Policy", "Terms of Use", "Subscribe"],
    ),
    // A short page of a personal site.
    (
        "daringfireball-1",
        "Daring Fireball: Colophon",
        &[
            "Articles and links are published through Movable Type. In addition to my own SmartyPants",
            "Web standards are important, and Daring Fireball adheres to them. Specifically, Daring",
            "If Daring Fireball looks goofy in your browser, you’re likely using a shitty browser that",
        ],
        &["var ", "Archive", "Copyright"],
    ),
    // A book chapter with notes, tables of contents and a long side navigation.
    (
        "google-sre-book-1",
        "Google - Site Reliability Engineering",
        &[
            "Google’s SRE teams have some basic principles and best practices for building successful",
            "The rate of requests that fail, either explicitly (e.g., HTTP 500s), implicitly (for",
        ],
        &["Table of Contents", "Copyright"],
    ),
];

#[test]
fn each_page_gives_its_title_and_main_text() {
    let mut failures = Vec::new();
    for (name, title, inside, outside) in CASES {
        let got = extract(&page(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        if got.title != *title {
            failures.push(format!("{name}: title {:?}, want {title:?}", got.title));
        }
        for s in *inside {
            if !got.text.contains(s) {
                failures.push(format!("{name}: main text lacks {s:?}"));
            }
        }
        for s in *outside {
            if got.text.contains(s) {
                failures.push(format!("{name}: main text has {s:?}"));
            }
        }
        if !failures.is_empty() {
            eprintln!(
                "---- {name} ({} chars) ----\n{}\n",
                got.text.len(),
                got.text.chars().take(3000).collect::<String>()
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
