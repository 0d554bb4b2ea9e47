//! The campaign tools of the Dungeon Master preset through `Session::execute`: a campaign
//! created with its game state, read, and changed (hit points by name); bad input refused
//! with nothing changed; and a value the writer set asks the writer before an agent
//! changes it, while the fields agents set stay open to them.
#![cfg(not(target_arch = "wasm32"))]

use draftsmith::bible::campaign::{current, Campaign};
use draftsmith::bible::Kind;
use draftsmith::commands::Origin;
use draftsmith::project::Chapter;
use serde_json::{json, Value};

mod common;
use common::session::Harness;

fn agent(name: &str) -> Origin {
    Origin::Agent(name.into())
}

fn harness() -> Harness {
    Harness::project("The Sunken Keep", vec![Chapter::new("c1", "Notes", "")])
}

fn campaign(h: &Harness) -> Campaign {
    Campaign::of(current(&h.s.bible).expect("a campaign"))
}

/// The root creates a campaign: Aria (12 of 12) and Bram (9 of 10) at the Rusty Flagon.
fn created(h: &mut Harness) -> Value {
    h.result_of(
        agent("root"),
        "c1",
        "campaign_create_entry",
        json!({
            "name": "The Sunken Keep",
            "premise": "A drowned fortress rises with the tide.",
            "location": "The Rusty Flagon",
            "party": [
                {"name": "Aria", "hp": 12, "max_hp": 12},
                {"name": "Bram", "hp": 9, "max_hp": 10, "conditions": ["tired"]}
            ],
            "inventory": ["rope", "torch"],
            "quests": [{"title": "Find the keep's bell"}],
            "time": "Day 1, dusk"
        }),
    )
}

#[test]
fn a_campaign_is_created_read_and_its_hit_points_changed_by_name() {
    let mut h = harness();
    let made = created(&mut h);
    assert_eq!(made["status"], "success", "{made}");
    assert_eq!(made["data"]["created"], "the-sunken-keep");
    // The player interface reads the game state of the campaign in play, with who set it.
    let state = h.result_of(
        agent("player_interface"),
        "c2",
        "campaign_read_state",
        json!({}),
    );
    assert_eq!(state["status"], "success", "{state}");
    let c = &state["data"]["campaign"];
    assert_eq!(c["location"], "The Rusty Flagon");
    assert_eq!(
        c["party"][1],
        json!({"name": "Bram", "hp": 9, "max_hp": 10, "conditions": ["tired"]})
    );
    assert_eq!(
        c["quests"][0],
        json!({"title": "Find the keep's bell", "status": "active"})
    );
    assert!(state["data"]["origins"]["party"]
        .as_str()
        .unwrap()
        .starts_with("agent:root:"));
    // The root writes a verdict's damage by name; the rest of the party is kept.
    let hit = h.result_of(
        agent("root"),
        "c3",
        "campaign_update_entry",
        json!({"hit_points": [{"name": "aria", "hp": 8}], "time": "Day 1, night"}),
    );
    assert_eq!(hit["status"], "success", "{hit}");
    assert_eq!(hit["data"]["changed"], json!(["party", "time"]));
    let after = campaign(&h);
    assert_eq!((after.party[0].hp, after.party[1].hp), (8, 9));
    assert_eq!(after.time, "Day 1, night");
    assert_eq!(after.inventory, ["rope", "torch"]);
    // The root reads it by name too.
    let read = h.result_of(
        agent("root"),
        "c4",
        "campaign_read_entry",
        json!({"campaign": "the sunken keep"}),
    );
    assert_eq!(
        read["data"]["campaign"]["premise"],
        "A drowned fortress rises with the tide."
    );
}

#[test]
fn bad_campaign_input_is_refused_and_changes_nothing() {
    let mut h = harness();
    // No campaign yet.
    let none = h.result_of(
        agent("player_interface"),
        "c0",
        "campaign_read_state",
        json!({}),
    );
    assert_eq!(none["data"]["code"], "not_found", "{none}");
    assert!(none["data"]["message"]
        .as_str()
        .unwrap()
        .contains("campaign_create_entry"));
    let too_many = h.result_of(
        agent("root"),
        "c1",
        "campaign_create_entry",
        json!({"name": "X", "party": [{"name": "Aria", "hp": 13, "max_hp": 12}]}),
    );
    assert_eq!(too_many["data"]["code"], "invalid_args", "{too_many}");
    assert!(too_many["data"]["message"]
        .as_str()
        .unwrap()
        .contains("max_hp"));
    let twice = h.result_of(
        agent("root"),
        "c2",
        "campaign_create_entry",
        json!({"name": "X", "party": [{"name": "Aria", "hp": 1, "max_hp": 2}, {"name": "aria", "hp": 1, "max_hp": 2}]}),
    );
    assert_eq!(twice["data"]["code"], "invalid_args", "{twice}");
    assert!(h.s.bible.list(Kind::Campaign).next().is_none());
    created(&mut h);
    let before = h.s.bible.clone();
    for (args, says) in [
        (
            json!({"hit_points": [{"name": "Cora", "hp": 3}]}),
            "not in the party (Aria, Bram)",
        ),
        (
            json!({"hit_points": [{"name": "Bram", "hp": 11}]}),
            "at most 10 hit points",
        ),
        (json!({"quests": [{"title": " "}]}), "needs a title"),
        (
            json!({"hit_points": [{"name": "Aria", "hp": "lots"}]}),
            "hit_points",
        ),
        (json!({}), "nothing to change"),
    ] {
        let r = h.result_of(
            agent("player_interface"),
            "c3",
            "campaign_update_state",
            args.clone(),
        );
        assert_eq!(r["status"], "error", "{args}: {r}");
        let message = r["data"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{args}: {message}");
        assert_eq!(h.s.bible, before, "{args} changed nothing");
    }
}

#[test]
fn a_value_the_writer_set_asks_the_writer_before_an_agent_changes_it() {
    let mut h = harness();
    created(&mut h);
    // The writer moves the party (in the page, through the same tool).
    h.clock.advance(60_000);
    let moved = h.result_of(
        Origin::User,
        "w1",
        "campaign_update_state",
        json!({"location": "The sea gate"}),
    );
    assert_eq!(moved["status"], "success", "{moved}");
    h.clock.advance(60_000);
    let before = h.s.bible.clone();
    let asked = h.result_of(
        agent("player_interface"),
        "c2",
        "campaign_update_state",
        json!({"location": "The Rusty Flagon"}),
    );
    assert_eq!(asked["data"]["code"], "approval_required", "{asked}");
    assert_eq!(
        h.s.bible, before,
        "nothing changes until the writer approves"
    );
    assert_eq!(campaign(&h).location, "The sea gate");
    // What an agent set stays open to agents.
    let hit = h.result_of(
        agent("player_interface"),
        "c3",
        "campaign_update_state",
        json!({"hit_points": [{"name": "Bram", "hp": 4}]}),
    );
    assert_eq!(hit["status"], "success", "{hit}");
    assert_eq!(campaign(&h).party[1].hp, 4);
}
