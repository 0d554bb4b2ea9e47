//! Agents as data: the Dungeon Master seed's workflows step by step (routing calls that
//! really run sub-agents in temporary sessions, response dictionaries, the player's answer,
//! no session left open), TextCraft's `assign_task` with tool permissions per agent, runs as
//! trees (one budget, one abort, one undo group, a pause deep in the tree that survives a
//! new worker and resumes once), and agent definitions (validation, persistence, export).
//!
//! The scripted models here decide only from the request they get (system prompt, offered
//! tools, transcript), as a real model would: see [`dm_brain`] and [`textcraft_brain`].
#![cfg(not(target_arch = "wasm32"))]

use std::rc::Rc;

use draftsmith::llm::client::Scripted;
use draftsmith::store::MemoryStore;
use serde_json::{json, Value};

mod common;
use common::page::*;

// ------------------------------------------------------------------------------------
// Reading a request (OpenAI wire format) as a model would
// ------------------------------------------------------------------------------------

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn system(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// The text of the first user message (the task of a sub-agent, the prompt of a root).
fn task(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The tool results after the last user message, in order, as JSON.
fn results(body: &Value) -> Vec<Value> {
    let messages = body["messages"].as_array().unwrap();
    let last_user = messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap_or(0);
    messages[last_user..]
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            serde_json::from_str(m["content"].as_str().unwrap_or("null")).unwrap_or(Value::Null)
        })
        .collect()
}

fn line(text: &str, label: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or("")
        .trim()
        .to_string()
}

fn has(body: &Value, tool: &str) -> bool {
    tool_names(body).iter().any(|t| t == tool)
}

fn n_calls(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["tool_calls"].as_array().map_or(0, Vec::len))
        .sum()
}

/// Which agent a request is for, by what it was offered (for assertions only).
fn who(body: &Value) -> &'static str {
    let s = system(body);
    if has(body, "route_action_to_root_agent") {
        "player_interface"
    } else if has(body, "route_to_rules_lawyer_agent") {
        "root"
    } else if s.contains("Rules Lawyer Agent") {
        "rules_lawyer"
    } else if s.contains("Narrative Agent") {
        "narrative"
    } else if s.contains("NPC Agent") {
        "npc"
    } else if s.contains("Campaign Creation Agent") {
        "campaign_creation"
    } else if s.contains("Character Creation Agent") {
        "character_creation"
    } else if has(body, "assign_task") {
        "architect"
    } else if s.contains("Narrator of TextCraft") {
        "narrator"
    } else if s.contains("Editor of TextCraft") {
        "editor"
    } else {
        "other"
    }
}

fn response_of(result: &Value) -> String {
    result["data"]["response"]["response_content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

/// A model playing every agent of the Dungeon Master preset from what each request says.
fn dm_brain(body: &Value) -> Scripted {
    let id = format!("call_{}", n_calls(body) + 1);
    let done = results(body);
    let t = task(body);
    match who(body) {
        "player_interface" => match done.first() {
            None => {
                let lower = t.to_lowercase();
                let (kind, target) = if lower.contains("campaign") {
                    ("meta", "")
                } else if lower.contains("character") {
                    ("character_creation", "")
                } else if lower.contains("attack") {
                    (
                        "combat",
                        lower
                            .rsplit("the ")
                            .next()
                            .unwrap_or("")
                            .trim_end_matches('.'),
                    )
                } else if lower.contains('?') {
                    ("question", "")
                } else {
                    ("dialogue", lower.strip_prefix("hello ").unwrap_or(""))
                };
                calls(
                    &id,
                    "route_action_to_root_agent",
                    json!({"action_type": kind, "player_input": t, "target": target, "context": "", "campaign_id": "c1"}),
                )
            }
            Some(result) => says(&format!("{} (narrated)", response_of(result))),
        },
        "root" => {
            let kind = line(&t, "Action Type:");
            let route = |tool: &str, action: &str, context: &str| {
                route_action(&id, &t, tool, action, context, "")
            };
            let answer = |content: &str| answer_player(&id, &kind, content);
            match (kind.as_str(), done.as_slice()) {
                ("dialogue", []) => route("route_to_npc_agent", "dialogue", ""),
                ("dialogue", [npc]) => answer(&response_of(npc)),
                ("combat", []) => route("route_to_rules_lawyer_agent", "combat", ""),
                ("combat", [rules]) => route(
                    "route_to_narrative_agent",
                    "combat_description",
                    &response_of(rules),
                ),
                ("combat", [_, story]) => answer(&response_of(story)),
                _ => says("I cannot route that."),
            }
        }
        agent @ ("rules_lawyer" | "narrative" | "npc") => {
            let target = line(&t, "Target:");
            let content = match agent {
                "rules_lawyer" => {
                    format!("Attack roll 17 against AC 13: hit, 7 damage; the {target} falls.")
                }
                "narrative" => format!(
                    "Your sword strikes true. {}",
                    line(&t, "Context:").replace("hit, 7 damage; ", "")
                ),
                _ => format!("[{}] Greetings, traveler!", capitalized(&target)),
            };
            calls(
                &id,
                "send_response_to_root_agent",
                json!({"agent_type": agent, "response_content": content, "action_type": line(&t, "Action Type:"), "campaign_id": "c1"}),
            )
        }
        _ => says("?"),
    }
}

/// The root's routing call `tool` for the action of its task `t`, as `action` with
/// `context` and the game state `state`.
fn route_action(
    id: &str,
    t: &str,
    tool: &str,
    action: &str,
    context: &str,
    state: &str,
) -> Scripted {
    calls(
        id,
        tool,
        json!({"action_type": action, "player_input": line(t, "Player Input:"), "target": line(t, "Target:"), "context": context, "game_state": state, "campaign_id": "c1"}),
    )
}

/// The root's final response to an action of type `kind`.
fn answer_player(id: &str, kind: &str, content: &str) -> Scripted {
    calls(
        id,
        "route_to_player_interface_agent",
        json!({"agent_type": "root", "response_content": content, "action_type": kind, "campaign_id": "c1"}),
    )
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

fn dm_page() -> Page {
    let page = Page::thinking(Rc::new(MemoryStore::new()), Rc::new(dm_brain));
    page.project();
    page.configure();
    page
}

/// The bodies of the requests the model got, in order.
fn bodies(page: &Page) -> Vec<Value> {
    page.transport
        .requests()
        .iter()
        .map(|r| serde_json::from_str(&r.body).unwrap())
        .collect()
}

/// The agents the requests went to, in order.
fn agents_asked(page: &Page) -> Vec<&'static str> {
    bodies(page).iter().map(who).collect()
}

fn of_type(page: &Page, kind: &str) -> Vec<Value> {
    page.run_events()
        .into_iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

#[test]
fn simple_dialogue_goes_player_interface_root_npc_and_back() {
    let page = dm_page();
    let run = page.ok(
        "run",
        json!({"prompt": "Hello blacksmith", "preset": "dungeon_master"}),
    );
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(run["agent"], "player_interface");
    assert_eq!(
        agents_asked(&page),
        [
            "player_interface",
            "root",
            "npc",
            "root",
            "player_interface"
        ]
    );
    // The routing calls made, each with the seed's action dictionary.
    let started: Vec<(String, String)> = of_type(&page, "tool_call_started")
        .iter()
        .map(|e| {
            (
                e["path"].as_str().unwrap_or("player_interface").to_string(),
                e["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        started,
        [
            (
                "player_interface".into(),
                "route_action_to_root_agent".into()
            ),
            (
                "player_interface › root".into(),
                "route_to_npc_agent".into()
            ),
            (
                "player_interface › root › npc".into(),
                "send_response_to_root_agent".into()
            ),
            (
                "player_interface › root".into(),
                "route_to_player_interface_agent".into()
            ),
        ]
    );
    let first = &of_type(&page, "tool_call_started")[0];
    assert_eq!(first["arguments"]["action_type"], "dialogue");
    assert_eq!(first["arguments"]["target"], "blacksmith");
    // A temporary session for each sub-agent, created and ended.
    let opened = of_type(&page, "session_started");
    let ended = of_type(&page, "session_ended");
    let names = |events: &[Value]| -> Vec<String> {
        events
            .iter()
            .map(|e| e["agent"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&opened), ["root", "npc"]);
    assert_eq!(names(&ended), ["npc", "root"]);
    // The root's session is the project's one long-running session; the npc's is
    // temporary, made for this task.
    let root_session = opened[0]["session"].as_str().unwrap();
    assert!(root_session.starts_with("root_session_"), "{root_session}");
    let session = opened[1]["session"].as_str().unwrap();
    assert!(session.starts_with("sub_agent_npc_"), "{session}");
    assert!(
        session.contains("_1000_"),
        "the session id has a timestamp: {session}"
    );
    assert!(ended.iter().all(|e| e["status"] == "finished"));
    // The npc's session saw nothing of the caller's conversation but the action.
    let requests = bodies(&page);
    let npc = &requests[2];
    assert_eq!(npc["messages"].as_array().unwrap().len(), 2, "{npc}");
    assert!(task(npc).starts_with("ACTION FROM ROOT AGENT:"));
    assert!(!npc.to_string().contains("Player Interface Agent"));
    // The response dictionary came back to the root as the routing call's result.
    let root_again = &requests[3];
    let npc_result = &results(root_again)[0];
    assert_eq!(npc_result["data"]["agent"], "npc");
    assert_eq!(npc_result["data"]["response"]["agent_type"], "npc");
    assert_eq!(
        npc_result["data"]["response"]["response_content"],
        "[Blacksmith] Greetings, traveler!"
    );
    // The player's final answer.
    assert_eq!(run["text"], "[Blacksmith] Greetings, traveler! (narrated)");
    assert_eq!(page.core.open_agent_sessions(), 0, "no session lingers");
}

#[test]
fn combat_goes_through_rules_lawyer_then_narrative() {
    let page = dm_page();
    let run = page.ok(
        "run",
        json!({"prompt": "I attack the goblin", "preset": "dungeon_master"}),
    );
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(
        agents_asked(&page),
        [
            "player_interface",
            "root",
            "rules_lawyer",
            "root",
            "narrative",
            "root",
            "player_interface"
        ]
    );
    let routed: Vec<Value> = of_type(&page, "tool_call_started")
        .into_iter()
        .filter(|e| e["name"].as_str().unwrap().starts_with("route"))
        .collect();
    assert_eq!(routed[0]["arguments"]["action_type"], "combat");
    assert_eq!(routed[0]["arguments"]["target"], "goblin");
    assert_eq!(routed[1]["name"], "route_to_rules_lawyer_agent");
    assert_eq!(routed[2]["name"], "route_to_narrative_agent");
    assert_eq!(routed[2]["arguments"]["action_type"], "combat_description");
    assert!(
        routed[2]["arguments"]["context"]
            .as_str()
            .unwrap()
            .contains("Attack roll 17"),
        "the root passed the rules lawyer's result on: {}",
        routed[2]
    );
    let opened: Vec<String> = of_type(&page, "session_started")
        .iter()
        .map(|e| e["path"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        opened,
        [
            "player_interface › root",
            "player_interface › root › rules_lawyer",
            "player_interface › root › narrative"
        ]
    );
    assert_eq!(of_type(&page, "session_ended").len(), 3);
    assert_eq!(
        run["text"],
        "Your sword strikes true. Attack roll 17 against AC 13: the goblin falls. (narrated)"
    );
    // Steps count across the whole tree: seven model calls.
    assert_eq!(run["steps"], 7);
    assert_eq!(page.core.open_agent_sessions(), 0);
}

/// A model that never volunteers a tool call (as SmolLM2-135M did): it answers in text
/// unless the request requires a call, and then makes the call the request allows (the
/// named function, or the first tool offered).
fn reluctant_brain(body: &Value) -> Scripted {
    let id = format!("call_{}", n_calls(body) + 1);
    let forced = !body["tool_choice"].is_null();
    let t = task(body);
    match (forced, who(body)) {
        (false, _) => match results(body).first() {
            Some(result) if !response_of(result).is_empty() => says(&response_of(result)),
            _ => says("You swing at the goblin. (made up, no rules consulted)"),
        },
        (true, "player_interface") => calls(
            &id,
            body["tool_choice"]["function"]["name"]
                .as_str()
                .map_or_else(|| tool_names(body)[0].clone(), str::to_string)
                .as_str(),
            json!({"action_type": "combat", "player_input": t, "target": "goblin"}),
        ),
        (true, "root") => calls(
            &id,
            "route_to_rules_lawyer_agent",
            json!({"action_type": "combat", "player_input": line(&t, "Player Input:"), "target": line(&t, "Target:")}),
        ),
        (true, _) => says("?"),
    }
}

#[test]
fn routing_agents_require_a_call_on_the_first_step_of_a_turn_only() {
    let page = Page::thinking(Rc::new(MemoryStore::new()), Rc::new(reluctant_brain));
    page.project();
    page.configure();
    let run = page.ok(
        "run",
        json!({"prompt": "I attack the goblin", "preset": "dungeon_master"}),
    );
    assert_eq!(run["status"], "finished", "{run}");
    // Each request, by agent, with the tool choice it carried: the player interface's
    // first step must call its routing tool (named, and on this OpenAI-compatible server
    // the only tool offered), the root's first step some tool; the rules
    // lawyer is free, and once a routed answer is back each is free to answer in text, so
    // the turn ends.
    let requests = bodies(&page);
    assert_eq!(tool_names(&requests[0]), ["route_action_to_root_agent"]);
    assert!(tool_names(&requests[4]).len() > 1, "all its tools again");
    let choices: Vec<(&str, Value)> = requests
        .iter()
        .map(|b| (who(b), b["tool_choice"].clone()))
        .collect();
    assert_eq!(
        choices,
        [
            (
                "player_interface",
                json!({"type": "function", "function": {"name": "route_action_to_root_agent"}}),
            ),
            ("root", json!("required")),
            ("rules_lawyer", Value::Null),
            ("root", Value::Null),
            ("player_interface", Value::Null),
        ]
    );
    // The model that would have answered alone reached the rules lawyer, whose verdict
    // (its final text) came back to the player.
    let routed: Vec<String> = of_type(&page, "tool_call_started")
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        routed,
        ["route_action_to_root_agent", "route_to_rules_lawyer_agent"]
    );
    assert_eq!(page.core.open_agent_sessions(), 0);
}

#[test]
fn the_step_budget_counts_across_the_tree_and_every_call_gets_one_result() {
    let page = dm_page();
    let run = page.ok(
        "run",
        json!({"prompt": "I attack the goblin", "preset": "dungeon_master", "maxSteps": 3}),
    );
    // Three model calls in all: player interface, root, rules lawyer; then nothing more.
    assert_eq!(page.transport.requests().len(), 3);
    assert_eq!(run["steps"], 3, "{run}");
    // The rules lawyer answered within the budget; the root then had no step left, so
    // its routing call to the root fails and the player interface stops too.
    let ended = of_type(&page, "session_ended");
    assert_eq!(ended.len(), 2, "{ended:?}");
    assert_eq!(ended[0]["agent"], "rules_lawyer");
    assert_eq!(ended[0]["status"], "finished");
    assert_eq!(ended[1]["agent"], "root");
    assert_eq!(ended[1]["status"], "max_steps");
    assert_eq!(run["status"], "max_steps");
    let started = of_type(&page, "tool_call_proposed").len();
    let finished = of_type(&page, "tool_call_finished").len();
    assert_eq!(
        started, finished,
        "every call at every level has one result"
    );
    assert_eq!(page.core.open_agent_sessions(), 0);
}

#[test]
fn abort_cancels_the_whole_tree_at_once() {
    let page = dm_page();
    let run = page.send_async(
        "run",
        json!({"prompt": "I attack the goblin", "preset": "dungeon_master", "runId": "r1"}),
    );
    let abort = async {
        // Wait until the rules lawyer's session is open, deep in the tree, then abort.
        loop {
            common::page::YieldNow(false).await;
            if of_type(&page, "session_started")
                .iter()
                .any(|e| e["agent"] == "rules_lawyer")
            {
                break;
            }
        }
        page.send_async("abort_run", json!({"runId": "r1"})).await
    };
    let (run, aborted) = futures::executor::block_on(futures::future::join(run, abort));
    assert_eq!(aborted["result"]["aborted"], json!(["r1"]), "{aborted}");
    assert_eq!(run["result"]["status"], "aborted", "{run}");
    let ended = of_type(&page, "session_ended");
    assert!(
        ended.iter().all(|e| e["status"] == "aborted"),
        "every level stopped: {ended:?}"
    );
    assert_eq!(ended.len(), 2);
    assert!(
        !agents_asked(&page).contains(&"narrative"),
        "nothing runs after the abort"
    );
    let ids = |kind: &str| -> Vec<String> {
        let mut ids: Vec<String> = of_type(&page, kind)
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(
        ids("tool_call_proposed"),
        ids("tool_call_finished"),
        "every call proposed at every level has exactly one result, under one id"
    );
    assert_eq!(ids("tool_call_proposed").len(), 3);
    assert_eq!(page.core.open_agent_sessions(), 0);
}

#[test]
fn the_root_conversation_survives_a_new_worker() {
    let store = Rc::new(MemoryStore::new());
    let page = Page::thinking(store.clone(), Rc::new(dm_brain));
    page.project();
    page.configure();
    page.ok(
        "run",
        json!({"prompt": "Hello blacksmith", "preset": "dungeon_master"}),
    );
    let project = page.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    drop(page);
    let page = Page::thinking(store, Rc::new(dm_brain));
    page.ok("open_project", json!({"id": project}));
    page.configure();
    page.ok(
        "run",
        json!({"prompt": "Hello innkeeper", "preset": "dungeon_master"}),
    );
    // The root's one long-running session: its first request of the new turn carries the
    // earlier turn (the action it was given, the NPC's answer and its own reply).
    let requests = bodies(&page);
    let root = &requests[1];
    assert_eq!(who(root), "root");
    let text = root["messages"].to_string();
    assert!(
        text.contains("Player Input: Hello blacksmith")
            && text.contains("[Blacksmith] Greetings, traveler!")
            && text.contains("Player Input: Hello innkeeper"),
        "the root remembers the earlier turn: {text}"
    );
    let session = |page: &Page| {
        of_type(page, "session_started")
            .iter()
            .find(|e| e["agent"] == "root")
            .map(|e| e["session"].clone())
    };
    assert_eq!(
        session(&page),
        Some(json!(format!("root_session_{}", project.as_str().unwrap())))
    );
    // Sub-agents never do: each starts fresh.
    let npc = &requests[2];
    assert_eq!(who(npc), "npc");
    assert!(!npc.to_string().contains("blacksmith"), "{npc}");
}

// ------------------------------------------------------------------------------------
// The Dungeon Master's campaign: a long-running root, the campaign record, character
// creation
// ------------------------------------------------------------------------------------

/// The text between `start` and the first of `ends` after it (trimmed), if `start` is there.
fn between<'a>(text: &'a str, start: &str, ends: &[char]) -> Option<&'a str> {
    let from = text.find(start)? + start.len();
    let rest = &text[from..];
    let to = rest.find(ends).unwrap_or(rest.len());
    Some(rest[..to].trim())
}

/// The first number in `text`.
fn number(text: &str) -> Option<u32> {
    text.split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())
        .and_then(|s| s.parse().ok())
}

/// "Bram, a dwarf cleric." after `marker`: the name and what the character is.
fn character_of(text: &str, marker: &str) -> (String, String) {
    let said = between(text, marker, &['\n']).unwrap_or("");
    let (name, what) = said.split_once(',').unwrap_or((said, ""));
    let what = what.trim().trim_end_matches('.');
    let what = what
        .strip_prefix("an ")
        .or_else(|| what.strip_prefix("a "))
        .unwrap_or(what);
    (name.trim().to_string(), what.to_string())
}

/// A model playing the Dungeon Master with its campaign from what each request says: the
/// root reads the
/// campaign record before combat, passes the party to the rules lawyer, and writes the
/// verdict's damage back (hit points computed from what it read); the campaign creation
/// agent writes an outline and creates the campaign from the player's words; the character
/// creation agent records the character the player describes. The player interface, the
/// NPC and the narrative agents answer as in [`dm_brain`].
fn campaign_brain(body: &Value) -> Scripted {
    let id = format!("call_{}", n_calls(body) + 1);
    let done = results(body);
    let t = task(body);
    match who(body) {
        "root" => {
            let kind = line(&t, "Action Type:");
            let route = |tool: &str, action: &str, context: &str, state: &str| {
                route_action(&id, &t, tool, action, context, state)
            };
            let answer = |content: &str| answer_player(&id, &kind, content);
            let read = || calls(&id, "campaign_read_entry", json!({}));
            let party = |read: &Value| -> Vec<(String, u64, u64)> {
                read["data"]["campaign"]["party"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|m| {
                        (
                            m["name"].as_str().unwrap_or("").to_string(),
                            m["hp"].as_u64().unwrap_or(0),
                            m["max_hp"].as_u64().unwrap_or(0),
                        )
                    })
                    .collect()
            };
            let shown = |read: &Value| {
                party(read)
                    .iter()
                    .map(|(n, hp, max)| format!("{n} {hp}/{max} HP"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            match (kind.as_str(), done.as_slice()) {
                ("meta", []) => route("route_to_campaign_creation_agent", "meta", "", ""),
                ("character_creation", []) => route(
                    "route_to_character_creation_agent",
                    "character_creation",
                    "",
                    "",
                ),
                ("meta" | "character_creation", [made]) => answer(&response_of(made)),
                ("combat" | "question", []) => read(),
                ("combat", [state]) => {
                    route("route_to_rules_lawyer_agent", "combat", "", &shown(state))
                }
                ("combat", [state, rules]) => {
                    // "... hits Aria for 4 damage": the member's hit points after it.
                    let verdict = response_of(rules);
                    let hurt = between(&verdict, "hits ", &[' ']).unwrap_or("");
                    let damage = between(&verdict, " for ", &['.']).and_then(number);
                    match (party(state).iter().find(|(n, ..)| n == hurt), damage) {
                        (Some((name, hp, _)), Some(damage)) => calls(
                            &id,
                            "campaign_update_entry",
                            json!({"hit_points": [{"name": name, "hp": hp.saturating_sub(u64::from(damage))}]}),
                        ),
                        _ => says("I cannot read the verdict."),
                    }
                }
                ("combat", [_, rules, _]) => route(
                    "route_to_narrative_agent",
                    "combat_description",
                    &response_of(rules),
                    "",
                ),
                ("combat", [_, _, updated, story]) => {
                    answer(&format!("{} ({})", response_of(story), shown(updated)))
                }
                ("question", [state]) => answer(&format!(
                    "At {}: {}.",
                    state["data"]["campaign"]["location"]
                        .as_str()
                        .unwrap_or("?"),
                    shown(state)
                )),
                _ => says("I cannot route that."),
            }
        }
        "rules_lawyer" => {
            let state = line(&t, "Game State:");
            let hurt = state.split(' ').next().unwrap_or("you");
            calls(
                &id,
                "send_response_to_root_agent",
                json!({"agent_type": "rules_lawyer", "response_content": format!("Attack roll 17 against AC 13: hit, the goblin falls. Its last swing hits {hurt} for 4 damage.")}),
            )
        }
        "campaign_creation" => {
            let input = line(&t, "Player Input:");
            let name = between(&input, "called ", &[';', '.']).unwrap_or("The Campaign");
            let (hero, rest) = character_of(&input, "my character is ");
            let hp = number(&rest).unwrap_or(10);
            match done.as_slice() {
                [] => calls(
                    &id,
                    "write_file",
                    json!({"path": "plans/campaign.md", "content": format!("# {name}\n\nAct 1: the tide goes out.\nAct 2: the keep.\nAct 3: the bell.\n")}),
                ),
                [_] => calls(
                    &id,
                    "campaign_create_entry",
                    json!({"name": name, "outline": "plans/campaign.md", "location": "The Rusty Flagon",
                           "party": [{"name": hero, "hp": hp, "max_hp": hp}],
                           "quests": [{"title": "Find the keep's bell"}], "time": "Day 1, dusk"}),
                ),
                [_, made, ..] => calls(
                    &id,
                    "send_response_to_root_agent",
                    json!({"agent_type": "campaign_creation", "response_content": format!("{name} begins at the Rusty Flagon ({}).", made["status"].as_str().unwrap_or("?"))}),
                ),
            }
        }
        "character_creation" => {
            let input = match line(&t, "Player Input:") {
                routed if !routed.is_empty() => routed,
                _ => t.clone(),
            };
            let (name, what) = character_of(&input, "character: ");
            let status = |r: &Value| r["status"].as_str().unwrap_or("?").to_string();
            match done.as_slice() {
                [] => calls(
                    &id,
                    "character_create_entry",
                    json!({"name_src": name, "notes": what}),
                ),
                // Recorded: then the party of the campaign in play, if there is one.
                [_] => calls(&id, "campaign_read_state", json!({})),
                [_, state] if state["status"] == "success" => {
                    let mut party = state["data"]["campaign"]["party"].clone();
                    if let Some(members) = party.as_array_mut() {
                        members.push(json!({"name": name, "hp": 10, "max_hp": 10}));
                    }
                    calls(&id, "campaign_update_state", json!({ "party": party }))
                }
                [made, rest @ ..] => {
                    let mut content = format!("{name} the {what} is ready ({}).", status(made));
                    if let [_, joined] = rest {
                        content.push_str(&format!(" Joining the party: {}.", status(joined)));
                    }
                    if has(body, "send_response_to_root_agent") {
                        calls(
                            &id,
                            "send_response_to_root_agent",
                            json!({"agent_type": "character_creation", "response_content": content}),
                        )
                    } else {
                        says(&content)
                    }
                }
            }
        }
        _ => dm_brain(body),
    }
}

fn campaign_page(store: Rc<MemoryStore>) -> Page {
    let page = Page::thinking(store, Rc::new(campaign_brain));
    page.project();
    page.configure();
    page
}

/// The campaign in play, as the page reads it.
fn campaign_record(page: &Page) -> Value {
    let list = page.ok("bible_list", json!({"kind": "campaign"}));
    list["kinds"]["campaign"][0].clone()
}

#[test]
fn three_turns_through_the_root_survive_a_new_worker_and_the_combat_changes_the_campaign() {
    let store = Rc::new(MemoryStore::new());
    let page = campaign_page(store.clone());
    let turn = |page: &Page, prompt: &str| {
        let run = page.ok("run", json!({"prompt": prompt, "preset": "dungeon_master"}));
        assert_eq!(run["status"], "finished", "{prompt}: {run}");
        run
    };
    // 1. A campaign: the campaign creation agent writes the outline and the record.
    turn(
        &page,
        "Start a campaign called The Sunken Keep; my character is Aria, 12 hit points.",
    );
    let campaign = campaign_record(&page);
    assert_eq!(campaign["name"], "The Sunken Keep", "{campaign}");
    assert_eq!(campaign["outline"], "plans/campaign.md");
    assert_eq!(
        campaign["party"],
        json!([{"name": "Aria", "hp": 12, "max_hp": 12}])
    );
    assert!(campaign["name_origin"]
        .as_str()
        .unwrap()
        .starts_with("agent:campaign_creation:"));
    let outline = page.ok(
        "execute",
        json!({"tool": "read_file", "args": {"path": "plans/campaign.md"}}),
    );
    assert!(
        outline["data"]["content"]
            .as_str()
            .unwrap_or("")
            .starts_with("# The Sunken Keep"),
        "{outline}"
    );
    // 2. Combat: the rules lawyer's verdict goes into the record through a campaign tool.
    let fight = turn(&page, "I attack the goblin");
    assert_eq!(
        fight["text"],
        "Your sword strikes true. Attack roll 17 against AC 13: hit, the goblin falls. Its last swing hits Aria for 4 damage. (Aria 8/12 HP) (narrated)"
    );
    let updated: Vec<Value> = of_type(&page, "tool_call_started")
        .into_iter()
        .filter(|e| e["name"] == "campaign_update_entry")
        .collect();
    assert_eq!(updated.len(), 1);
    assert_eq!(updated[0]["agent"], "root", "{}", updated[0]);
    let project = page.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    drop(page);
    // 3. A new worker on the same store: the root still has the campaign's conversation.
    let page = Page::thinking(store, Rc::new(campaign_brain));
    page.ok("open_project", json!({"id": project}));
    page.configure();
    let asked = turn(&page, "How badly am I hurt?");
    assert_eq!(
        asked["text"], "At The Rusty Flagon: Aria 8/12 HP. (narrated)",
        "{asked}"
    );
    let requests = bodies(&page);
    let root = &requests[1];
    assert_eq!(who(root), "root");
    let tasks: Vec<String> = root["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| line(m["content"].as_str().unwrap(), "Player Input:"))
        .collect();
    assert_eq!(
        tasks,
        [
            "Start a campaign called The Sunken Keep; my character is Aria, 12 hit points.",
            "I attack the goblin",
            "How badly am I hurt?"
        ],
        "the root's conversation carries all three turns"
    );
    let text = root["messages"].to_string();
    assert!(text.contains("hits Aria for 4 damage"), "{text}");
    // The record shows the combat's effect after the reload.
    let campaign = campaign_record(&page);
    assert_eq!(
        campaign["party"],
        json!([{"name": "Aria", "hp": 8, "max_hp": 12}])
    );
    assert!(campaign["party_origin"]
        .as_str()
        .unwrap()
        .starts_with("agent:root:"));
    // Every sub-agent's session was temporary; the root's was the campaign's.
    let sessions: Vec<String> = of_type(&page, "session_started")
        .iter()
        .map(|e| e["session"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        sessions,
        [format!(
            "root_the-sunken-keep_session_{}",
            project.as_str().unwrap()
        )]
    );
    assert_eq!(page.core.open_agent_sessions(), 0);
}

/// Approve the one call (of `tool`) a paused run waits for; the run's end or next pause.
fn approve_pending(page: &Page, run: &Value, tool: &str) -> Value {
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["pending"][0]["tool"], tool, "{run}");
    let call = run["pending"][0]["callId"].as_str().unwrap();
    page.ok("approve", json!({"callId": call, "decision": "approve"}))["run"].clone()
}

fn characters(page: &Page) -> Vec<Value> {
    page.ok("bible_list", json!({"kind": "character"}))["kinds"]["character"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn character_creation_standalone_records_the_character() {
    let page = campaign_page(Rc::new(MemoryStore::new()));
    let run = page.ok(
        "run",
        json!({"prompt": "Create my character: Aria, an elf ranger.", "agent": "character_creation"}),
    );
    // Creating a character asks the writer (the policy of character_create_entry); with no
    // campaign in play there is no party to join.
    let end = approve_pending(&page, &run, "character_create_entry");
    assert_eq!(end["status"], "finished", "{end}");
    assert_eq!(end["text"], "Aria the elf ranger is ready (success).");
    let made = characters(&page);
    assert_eq!(made.len(), 1);
    assert_eq!(made[0]["name_src"], "Aria");
    assert_eq!(made[0]["notes"], "elf ranger");
    assert!(made[0]["name_src_origin"]
        .as_str()
        .unwrap()
        .starts_with("agent:character_creation:"));
}

#[test]
fn character_creation_through_the_route_records_the_character_and_it_joins_the_party() {
    let page = campaign_page(Rc::new(MemoryStore::new()));
    // The writer set up the campaign, party and all.
    let made = page.ok(
        "execute",
        json!({"tool": "campaign_create_entry", "args": {"name": "The Sunken Keep", "party": [{"name": "Aria", "hp": 12, "max_hp": 12}]}}),
    );
    assert_eq!(made["status"], "success", "{made}");
    let run = page.ok(
        "run",
        json!({"prompt": "I want a new character: Bram, a dwarf cleric.", "preset": "dungeon_master"}),
    );
    assert_eq!(
        run["pending"][0]["origin"], "agent:character_creation",
        "{run}"
    );
    let joining = approve_pending(&page, &run, "character_create_entry");
    // The party is the writer's: changing it asks the writer too.
    let end = approve_pending(&page, &joining, "campaign_update_state");
    assert_eq!(end["status"], "finished", "{end}");
    assert_eq!(
        end["text"],
        "Bram the dwarf cleric is ready (success). Joining the party: success. (narrated)"
    );
    assert_eq!(
        campaign_record(&page)["party"],
        json!([{"name": "Aria", "hp": 12, "max_hp": 12}, {"name": "Bram", "hp": 10, "max_hp": 10}])
    );
    let routed: Vec<String> = of_type(&page, "tool_call_started")
        .iter()
        .filter_map(|e| e["name"].as_str())
        .filter(|n| n.starts_with("route"))
        .map(str::to_string)
        .collect();
    assert_eq!(
        routed,
        [
            "route_action_to_root_agent",
            "route_to_character_creation_agent",
            "route_to_player_interface_agent"
        ]
    );
    let made = characters(&page);
    assert_eq!(made.len(), 1);
    assert_eq!(
        (made[0]["name_src"].clone(), made[0]["notes"].clone()),
        (json!("Bram"), json!("dwarf cleric"))
    );
    assert_eq!(page.core.open_agent_sessions(), 0);
}

// ------------------------------------------------------------------------------------
// TextCraft
// ------------------------------------------------------------------------------------

const PLAN: &str = "# Chapter 3\nThe storm breaks over the lighthouse; Mara climbs to the lamp.";

/// A model playing the TextCraft agents from what each request says.
fn textcraft_brain(body: &Value) -> Scripted {
    let id = format!("call_{}", n_calls(body) + 1);
    let done = results(body);
    let t = task(body);
    match who(body) {
        "architect" => match done.len() {
            0 => calls(
                &id,
                "write_file",
                json!({"path": "plans/ch3.md", "content": PLAN}),
            ),
            1 => calls(
                &id,
                "assign_task",
                json!({"target_agent": "narrator", "task_description": "Draft chapter 3 from the plan in plans/ch3.md.", "target_file": "manuscripts/03-the-storm.md"}),
            ),
            2 => calls(
                &id,
                "assign_task",
                json!({"target_agent": "editor", "task_description": "In the chapter, change the phrase 'the dark sea' to 'the black sea'.", "target_file": "manuscripts/03-the-storm.md"}),
            ),
            _ => {
                let mut files: Vec<String> = done
                    .iter()
                    .flat_map(|r| {
                        r["data"]["files_changed"]
                            .as_array()
                            .cloned()
                            .unwrap_or_default()
                    })
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect();
                files.dedup();
                says(&format!(
                    "Planned, drafted and edited: {}.",
                    files.join(", ")
                ))
            }
        },
        "narrator" => {
            let file = line(&t, "Target file:");
            match done.len() {
                0 => calls(&id, "read_file", json!({"path": "plans/ch3.md"})),
                1 => {
                    let plan = done[0]["data"]["content"].as_str().unwrap_or("");
                    let scene = plan.lines().last().unwrap_or("");
                    calls(
                        &id,
                        "write_file",
                        json!({"path": file, "content": format!("{scene}\nBelow, the dark sea roared.\n")}),
                    )
                }
                _ => says(&format!("Drafted {file}.")),
            }
        }
        "editor" => {
            let file = line(&t, "Target file:");
            match done.len() {
                // It tries to rewrite the whole file first, which it may not do.
                0 => calls(
                    &id,
                    "write_file",
                    json!({"path": file, "content": "rewritten"}),
                ),
                1 => calls(
                    &id,
                    "edit_file",
                    json!({"path": file, "search_text": "the dark sea", "replace_text": "the black sea"}),
                ),
                _ => says(&format!(
                    "Changed 'the dark sea' to 'the black sea' in {file}."
                )),
            }
        }
        _ => says("?"),
    }
}

/// The TextCraft run's traces: whether `plans/ch3.md` exists (read through the tools) and
/// the chapter's text.
fn textcraft_state(page: &Page) -> (bool, String) {
    let plan = page.ok(
        "execute",
        json!({"tool": "read_file", "args": {"path": "plans/ch3.md"}}),
    );
    let exists = match plan["status"].as_str() {
        Some("success") => {
            assert_eq!(plan["data"]["content"], PLAN, "{plan}");
            true
        }
        _ => {
            assert_eq!(plan["data"]["code"], "not_found", "{plan}");
            false
        }
    };
    let chapter = page.ok(
        "execute",
        json!({"tool": "read_file", "args": {"path": "manuscripts/03-the-storm.md"}}),
    );
    (
        exists,
        chapter["data"]["content"].as_str().unwrap().to_string(),
    )
}

/// Whether the store holds the project's `plans/ch3.md`.
fn plan_stored(page: &Page) -> bool {
    let key = format!(
        "{}/plans/ch3.md",
        page.ok("list_projects", json!({}))["projects"][0]["id"]
            .as_str()
            .unwrap()
    );
    use draftsmith::store::{Store, Table};
    futures::executor::block_on(page.store.get(Table::Files, &key))
        .unwrap()
        .is_some()
}

#[test]
fn textcraft_plans_assigns_drafting_and_editing_in_one_undo_group() {
    let store = Rc::new(MemoryStore::new());
    let page = Page::thinking(store.clone(), Rc::new(textcraft_brain));
    page.ok(
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
            {"title": "The Stair", "text": "Mara climbed the stair."},
            {"title": "The Lamp", "text": "The lamp was dark."},
            {"title": "The Storm", "text": "(to be written)"}
        ]}),
    );
    page.configure();
    let run = page.ok(
        "run",
        json!({"prompt": "Plan chapter 3 and draft it.", "preset": "textcraft"}),
    );
    assert_eq!(run["status"], "finished", "{run}");
    assert_eq!(
        run["text"],
        "Planned, drafted and edited: manuscripts/03-the-storm.md."
    );
    // The plan and the chapter.
    let plan = page.ok(
        "execute",
        json!({"tool": "read_file", "args": {"path": "plans/ch3.md"}}),
    );
    assert_eq!(plan["data"]["content"], PLAN, "{plan}");
    let chapter = page.ok(
        "execute",
        json!({"tool": "read_file", "args": {"path": "manuscripts/03-the-storm.md"}}),
    );
    let text = chapter["data"]["content"].as_str().unwrap().to_string();
    assert!(
        text.contains("Mara climbs to the lamp.\nBelow, the black sea roared."),
        "{text}"
    );
    // The editor's write_file was refused, naming who may call it.
    let requests = bodies(&page);
    let editor_second = requests
        .iter()
        .find(|b| who(b) == "editor" && results(b).len() == 1)
        .unwrap();
    let refusal = &results(editor_second)[0];
    assert_eq!(refusal["status"], "error");
    let message = refusal["data"]["message"].as_str().unwrap();
    assert!(
        message.contains("'write_file' is not one of your tools")
            && message.contains("architect, narrator"),
        "{message}"
    );
    assert!(!tool_names(editor_second).contains(&"write_file".to_string()));
    // assign_task results carry the summary and the files changed.
    let architect_last = requests
        .iter()
        .rev()
        .find(|b| who(b) == "architect")
        .unwrap();
    let done = results(architect_last);
    assert_eq!(done[1]["data"]["agent"], "narrator");
    assert_eq!(
        done[1]["data"]["summary"],
        "Drafted manuscripts/03-the-storm.md."
    );
    assert_eq!(
        done[1]["data"]["files_changed"],
        json!(["manuscripts/03-the-storm.md"])
    );
    assert_eq!(done[2]["data"]["agent"], "editor");
    assert_eq!(
        done[2]["data"]["files_changed"],
        json!(["manuscripts/03-the-storm.md"])
    );
    // The edits keep their agents' origins, in one undo group.
    let history = page.ok("history", json!({}));
    let entries = history["entries"].as_array().unwrap();
    let agent_entries: Vec<&Value> = entries
        .iter()
        .filter(|e| e["origin"].as_str().unwrap_or("").starts_with("agent:"))
        .collect();
    let origins: Vec<&str> = agent_entries
        .iter()
        .map(|e| e["origin"].as_str().unwrap())
        .collect();
    assert_eq!(
        origins,
        ["agent:editor", "agent:narrator", "agent:architect"],
        "newest first: {history}"
    );
    assert!(
        agent_entries
            .iter()
            .all(|e| e["group"] == agent_entries[0]["group"]),
        "{history}"
    );
    assert_eq!(agent_entries[2]["description"], "Write plans/ch3.md");
    let done = (true, text.clone());
    assert_eq!(textcraft_state(&page), done);
    assert!(plan_stored(&page));
    // One plain undo removes all of it: the plan the Architect wrote, the Narrator's draft
    // and the Editor's fix. The page hears of the file, and the store forgets it.
    page.events.take();
    let undone = page.ok("undo", json!({}));
    assert_eq!(undone["files"], json!(["plans/ch3.md"]), "{undone}");
    assert_eq!(undone["filesKept"], json!([]));
    assert_eq!(undone["canUndo"], false, "one group: {undone}");
    let announced: Vec<Value> = page
        .events
        .take()
        .into_iter()
        .filter(|e| e.kind == "files_changed")
        .map(|e| e.data)
        .collect();
    assert_eq!(announced.len(), 1, "{announced:?}");
    assert_eq!(announced[0]["path"], "plans/ch3.md");
    assert_eq!(announced[0]["deleted"], true);
    let before = (false, "(to be written)".to_string());
    assert_eq!(textcraft_state(&page), before);
    assert!(!plan_stored(&page));
    // Redo brings all of it back.
    let redone = page.ok("redo", json!({}));
    assert_eq!(redone["files"], json!(["plans/ch3.md"]), "{redone}");
    assert_eq!(textcraft_state(&page), done);
    assert!(plan_stored(&page));
    assert_eq!(page.core.open_agent_sessions(), 0);
    // After a reload (a new worker on the stored history), plain undo still removes it all,
    // and redo brings it back.
    let project = page.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    drop(page);
    let page = Page::thinking(store, Rc::new(textcraft_brain));
    page.ok("open_project", json!({"id": project}));
    assert_eq!(textcraft_state(&page), done);
    page.ok("undo", json!({}));
    assert_eq!(textcraft_state(&page), before);
    assert!(!plan_stored(&page));
    page.ok("redo", json!({}));
    assert_eq!(textcraft_state(&page), done);
    assert!(plan_stored(&page));
}

#[test]
fn undo_can_take_back_one_sub_agents_changes_by_its_origin() {
    let page = Page::thinking(Rc::new(MemoryStore::new()), Rc::new(textcraft_brain));
    page.ok(
        "create_project",
        json!({"name": "Lighthouse", "chapters": [
            {"title": "One", "text": "a"}, {"title": "Two", "text": "b"},
            {"title": "The Storm", "text": "(to be written)"}
        ]}),
    );
    page.configure();
    page.ok(
        "run",
        json!({"prompt": "Plan chapter 3 and draft it.", "preset": "textcraft"}),
    );
    page.ok("undo", json!({"origin": "agent:editor"}));
    let chapter = page.ok(
        "execute",
        json!({"tool": "read_file", "args": {"path": "manuscripts/03-the-storm.md"}}),
    );
    let text = chapter["data"]["content"].as_str().unwrap();
    assert!(
        text.contains("the dark sea"),
        "the editor's change is undone, the narrator's draft stays: {text}"
    );
}

/// A model playing the TextCraft agents asked to draft a new chapter: the Architect looks at
/// the chapter files, then assigns the chapter the prompt names to the Narrator, in the
/// seed's path style; the Narrator writes it under a heading of its own.
fn new_chapter_brain(body: &Value) -> Scripted {
    let id = format!("call_{}", n_calls(body) + 1);
    let done = results(body);
    let t = task(body);
    match who(body) {
        "architect" => match done.len() {
            0 => calls(&id, "list_files", json!({"directory": "manuscripts"})),
            1 => {
                let number: usize = t
                    .split_whitespace()
                    .skip_while(|w| !w.eq_ignore_ascii_case("chapter"))
                    .nth(1)
                    .and_then(|w| w.trim_matches(|c: char| !c.is_ascii_digit()).parse().ok())
                    .unwrap_or(done[0]["data"]["count"].as_u64().unwrap_or(0) as usize + 1);
                calls(
                    &id,
                    "assign_task",
                    json!({"target_agent": "narrator", "task_description": format!("Draft chapter {number}: {t}"), "target_file": format!("manuscripts/ch{number:02}.md")}),
                )
            }
            _ => says(&format!(
                "Done: {}.",
                done[1]["data"]["summary"].as_str().unwrap_or("")
            )),
        },
        "narrator" => {
            let file = line(&t, "Target file:");
            match done.len() {
                0 => calls(
                    &id,
                    "write_file",
                    json!({"path": file, "content": "# The Lamp Room\n\nMara reached the lamp at last.\n"}),
                ),
                _ => match done[0]["status"].as_str() {
                    Some("success") => says(&format!("Drafted {file}.")),
                    _ => says(&format!("Could not write {file}.")),
                },
            }
        }
        _ => says("?"),
    }
}

#[test]
fn the_narrator_drafts_a_new_chapter_and_plain_undo_removes_it() {
    let page = Page::thinking(Rc::new(MemoryStore::new()), Rc::new(new_chapter_brain));
    page.three_chapters();
    page.configure();
    let run = page.ok(
        "run",
        json!({"prompt": "Narrator, draft chapter 4: Mara reaches the lamp room.", "preset": "textcraft"}),
    );
    assert_eq!(run["text"], "Done: Drafted manuscripts/ch04.md..", "{run}");
    assert_eq!(
        page.manuscript_files(),
        [
            "01-the-stair.md",
            "02-the-lamp.md",
            "03-the-storm.md",
            "04-the-lamp-room.md"
        ]
    );
    let chapter = page.ok("get_chapter", json!({"chapter": "4"}));
    assert_eq!(chapter["title"], "The Lamp Room", "{chapter}");
    assert_eq!(
        chapter["text"],
        "# The Lamp Room\n\nMara reached the lamp at last.\n"
    );
    let history = page.ok("history", json!({}));
    assert_eq!(
        history["entries"][0]["origin"], "agent:narrator",
        "{history}"
    );
    // Plain undo removes the chapter; redo brings it back.
    page.ok("undo", json!({}));
    assert_eq!(page.manuscript_files().len(), 3);
    page.ok("redo", json!({}));
    assert_eq!(page.manuscript_files().len(), 4);
}

// ------------------------------------------------------------------------------------
// Definitions
// ------------------------------------------------------------------------------------

fn spec(name: &str, tools: &[&str], subs: &[&str]) -> Value {
    json!({
        "name": name,
        "description": format!("The {name}."),
        "systemPrompt": format!("You are the {name}. You are done when you answered."),
        "tools": tools,
        "subAgents": subs.iter().map(|s| json!({"agent": s})).collect::<Vec<_>>(),
        "talksToWriter": true,
    })
}

#[test]
fn definitions_are_validated_with_clear_errors_and_change_nothing() {
    let page = Page::new(vec![]);
    page.project();
    let (code, message) = page.err(
        "define_agent",
        json!({"agent": spec("scout", &["read_chaptr"], &[])}),
    );
    assert_eq!(code, "invalid_params");
    assert!(
        message.contains("unknown tool 'read_chaptr'") && message.contains("read_chapter"),
        "{message}"
    );
    let (_, message) = page.err(
        "define_agent",
        json!({"agent": spec("boss", &[], &["ghost"])}),
    );
    assert!(
        message.contains("sub-agent 'ghost' does not exist"),
        "{message}"
    );
    let (_, message) = page.err("define_agent", json!({"agent": spec("root", &[], &[])}));
    assert!(message.contains("preset's agent"), "{message}");
    let (_, message) = page.err("define_agent", json!({"agent": spec("Bad Name", &[], &[])}));
    assert!(message.contains("lowercase"), "{message}");
    // A cycle: a → b, then b → a.
    page.ok(
        "define_agent",
        json!({"agent": spec("b", &["read_chapter"], &[])}),
    );
    page.ok("define_agent", json!({"agent": spec("a", &[], &["b"])}));
    let (_, message) = page.err("define_agent", json!({"agent": spec("b", &[], &["a"])}));
    assert!(message.contains("cycle: b → a → b"), "{message}");
    let (_, message) = page.err("define_agent", json!({"agent": spec("c", &[], &["c"])}));
    assert!(message.contains("cycle"), "{message}");
    // Nothing of the refused definitions is there; b is unchanged.
    let list = page.ok("list_agents", json!({}));
    let defined: Vec<&Value> = list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["builtin"] == false)
        .collect();
    let names: Vec<&str> = defined
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(defined[1]["subAgents"], json!([]));
    assert_eq!(defined[0]["routingTools"], json!(["route_to_b_agent"]));
    // b is a's sub-agent: it cannot be deleted before a changes.
    let (_, message) = page.err("delete_agent", json!({"name": "b"}));
    assert!(message.contains("sub-agent of a"), "{message}");
    page.ok("delete_agent", json!({"name": "a"}));
    page.ok("delete_agent", json!({"name": "b"}));
    let (_, message) = page.err("delete_agent", json!({"name": "narrator"}));
    assert!(message.contains("preset's agent"), "{message}");
}

#[test]
fn a_tool_choice_must_name_a_tool_of_the_agent() {
    let page = Page::new(vec![]);
    page.project();
    let with = |name: &str, tools: &[&str], subs: &[&str], choice: &str| {
        let mut agent = spec(name, tools, subs);
        agent["toolChoice"] = json!(choice);
        json!({ "agent": agent })
    };
    let (code, message) = page.err(
        "define_agent",
        with("scout", &["read_chapter"], &[], "read_chaptr"),
    );
    assert_eq!(code, "invalid_params");
    assert!(
        message.contains("'toolChoice' names 'read_chaptr'") && message.contains("read_chapter"),
        "{message}"
    );
    let (_, message) = page.err("define_agent", with("mute", &[], &[], "required"));
    assert!(message.contains("has no tools"), "{message}");
    let listed = |page: &Page| page.ok("list_agents", json!({}))["agents"].clone();
    assert!(!listed(&page).to_string().contains("\"scout\""));
    // A routing tool may be named, and "required" needs only some tool.
    page.ok(
        "define_agent",
        with("scout", &["read_chapter"], &[], "required"),
    );
    page.ok(
        "define_agent",
        with("lead", &[], &["scout"], "route_to_scout_agent"),
    );
    let agents = listed(&page);
    let choice = |name: &str| {
        agents
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .map(|a| a["toolChoice"].clone())
    };
    assert_eq!(choice("lead"), Some(json!("route_to_scout_agent")));
    assert_eq!(choice("scout"), Some(json!("required")));
    assert_eq!(
        choice("player_interface"),
        Some(json!("route_action_to_root_agent"))
    );
    assert_eq!(choice("narrative"), Some(json!("auto")));
}

#[test]
fn list_agents_shows_presets_and_each_toolbox() {
    let page = Page::new(vec![]);
    page.project();
    let list = page.ok("list_agents", json!({}));
    let presets: Vec<&str> = list["presets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(presets, ["quill", "dungeon_master", "textcraft", "rentl"]);
    let agent = |name: &str| {
        list["agents"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(
        agent("editor")["toolbox"],
        json!(["read_file", "edit_file", "list_files", "search_code"])
    );
    assert_eq!(
        agent("narrator")["toolbox"],
        json!(["read_file", "write_file"])
    );
    assert_eq!(agent("architect")["routingTools"], json!(["assign_task"]));
    assert_eq!(
        agent("root")["routingTools"],
        json!([
            "route_to_narrative_agent",
            "route_to_rules_lawyer_agent",
            "route_to_npc_agent",
            "route_to_character_creation_agent",
            "route_to_campaign_creation_agent"
        ])
    );
    assert_eq!(
        agent("player_interface")["routingTools"],
        json!(["route_action_to_root_agent"])
    );
    assert_eq!(agent("character_creation")["talksToWriter"], true);
    assert_eq!(agent("rules_lawyer")["talksToWriter"], false);
    // Only agents that talk to the writer start runs.
    page.configure();
    let (_, message) = page.err("run", json!({"prompt": "hi", "agent": "rules_lawyer"}));
    assert!(message.contains("does not talk to the writer"), "{message}");
}

#[test]
fn definitions_persist_and_go_with_the_export() {
    let store = Rc::new(MemoryStore::new());
    let page = Page::on(store.clone(), vec![], Rc::new(NeverSleeper));
    page.project();
    page.ok(
        "define_agent",
        json!({"agent": spec("scout", &["read_chapter"], &[])}),
    );
    page.ok(
        "define_agent",
        json!({"agent": spec("lead", &["list_chapters"], &["scout"])}),
    );
    let project = page.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    let export = page.ok("export_project", json!({}));
    assert_eq!(export["agents"].as_array().unwrap().len(), 2, "{export}");
    drop(page);
    // A new worker reads them back.
    let page = Page::on(store, vec![], Rc::new(NeverSleeper));
    page.ok("open_project", json!({"id": project}));
    let list = page.ok("list_agents", json!({}));
    assert!(list["agents"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["name"] == "lead" && a["routingTools"] == json!(["route_to_scout_agent"])));
    // Import into a fresh database: the agents come along; a broken one is refused whole.
    let fresh = Page::new(vec![]);
    let mut broken = export.clone();
    broken["agents"][0]["tools"] = json!(["no_such_tool"]);
    let (_, message) = fresh.err("import_project", json!({"document": broken}));
    assert!(message.contains("no_such_tool"), "{message}");
    assert_eq!(fresh.ok("list_projects", json!({}))["projects"], json!([]));
    fresh.ok("import_project", json!({"document": export}));
    let list = fresh.ok("list_agents", json!({}));
    assert_eq!(
        list["agents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a["builtin"] == false)
            .count(),
        2
    );
}

// ------------------------------------------------------------------------------------
// A pause deep in the tree
// ------------------------------------------------------------------------------------

const NOTES: &str = "Mara fears the sea; never let her swim.";

/// `boss` routes the task to `scribe`, which overwrites the writer's notes on Mara (an
/// approval), reads the result and answers; `boss` passes the answer on.
fn pause_brain(body: &Value) -> Scripted {
    let id = format!("call_{}", n_calls(body) + 1);
    let done = results(body);
    if has(body, "route_to_scribe_agent") {
        match done.first() {
            None => calls(
                &id,
                "route_to_scribe_agent",
                json!({"action_type": "meta", "player_input": task(body)}),
            ),
            Some(r) => says(&format!("Scribe says: {}", response_of(r))),
        }
    } else {
        match done.first() {
            None => calls(
                &id,
                "character_update_notes",
                json!({"character": "mara", "notes": "Mara loves swimming."}),
            ),
            Some(r) => calls(
                &id,
                "send_response_to_boss_agent",
                json!({"response_content": format!("notes now: {}", r["status"])}),
            ),
        }
    }
}

#[test]
fn an_approval_deep_in_the_tree_pauses_it_and_a_new_worker_resumes_it_once() {
    let store = Rc::new(MemoryStore::new());
    let page = Page::thinking(store.clone(), Rc::new(pause_brain));
    page.project();
    page.configure();
    page.ok(
        "bible_save",
        json!({"kind": "character", "fields": {"name_src": "Mara", "notes": NOTES}}),
    );
    page.ok(
        "define_agent",
        json!({"agent": spec("scribe", &["character_update_notes"], &[])}),
    );
    let mut boss = spec("boss", &[], &["scribe"]);
    boss["talksToWriter"] = json!(true);
    page.ok("define_agent", json!({"agent": boss}));
    let run = page.ok(
        "run",
        json!({"prompt": "Make Mara a swimmer.", "agent": "boss", "runId": "r1"}),
    );
    assert_eq!(run["status"], "paused", "{run}");
    assert_eq!(run["pending"][0]["tool"], "character_update_notes");
    assert_eq!(
        run["pending"][0]["origin"], "agent:scribe",
        "the card names the agent"
    );
    let asked = &of_type(&page, "approval_requested")[0];
    assert_eq!(asked["agent"], "scribe", "{asked}");
    assert_eq!(asked["path"], "boss › scribe");
    assert!(asked["session"]
        .as_str()
        .unwrap()
        .starts_with("sub_agent_scribe_"));
    assert_eq!(of_type(&page, "session_paused").len(), 1);
    assert_eq!(page.core.open_agent_sessions(), 0);
    let project = page.ok("list_projects", json!({}))["projects"][0]["id"].clone();
    let call_id = run["pending"][0]["callId"].as_str().unwrap().to_string();
    drop(page);

    // A new worker approves: the scribe's call runs once, the scribe answers, boss ends.
    let page = Page::thinking(store.clone(), Rc::new(pause_brain));
    page.ok("open_project", json!({"id": project}));
    page.configure();
    let decided = page.ok("approve", json!({"callId": call_id, "decision": "approve"}));
    assert_eq!(decided["run"]["status"], "finished", "{decided}");
    assert_eq!(
        decided["run"]["text"],
        "Scribe says: notes now: \"success\""
    );
    let asked = agents_or_names(&page);
    assert_eq!(
        asked,
        ["scribe", "boss"],
        "the tree resumed where it paused"
    );
    assert_eq!(of_type(&page, "session_resumed").len(), 1);
    assert_eq!(of_type(&page, "session_ended").len(), 1);
    // The decided call's event names the sub-agent's place in the tree, like its others.
    let finished = of_type(&page, "tool_call_finished");
    let decided_event = finished
        .iter()
        .find(|e| e["id"] == call_id.as_str())
        .unwrap();
    assert_eq!(decided_event["agent"], "scribe");
    assert_eq!(decided_event["path"], "boss › scribe", "{decided_event}");
    assert!(decided_event["session"]
        .as_str()
        .unwrap()
        .starts_with("sub_agent_scribe_"));
    let list = page.ok("bible_list", json!({"kind": "character"}));
    assert_eq!(
        list["kinds"]["character"][0]["notes"],
        "Mara loves swimming."
    );
    let applied = common::page::count_audit(&store, "character_update_notes");
    assert_eq!(applied, 1, "the approved call ran exactly once");
    // Approving again changes nothing.
    let again = page.send("approve", json!({"callId": call_id, "decision": "approve"}));
    assert_eq!(again["ok"], false);
    assert_eq!(page.core.open_agent_sessions(), 0);
}

/// Which defined agent each request of `page` went to.
fn agents_or_names(page: &Page) -> Vec<&'static str> {
    bodies(page)
        .iter()
        .map(|body| {
            if has(body, "route_to_scribe_agent") {
                "boss"
            } else {
                "scribe"
            }
        })
        .collect()
}

#[test]
fn an_agents_model_settings_go_into_its_requests() {
    let page = Page::thinking(
        Rc::new(MemoryStore::new()),
        Rc::new(|_: &Value| says("A short poem.")),
    );
    page.project();
    page.configure();
    let mut poet = spec("poet", &[], &[]);
    poet["model"] = json!({"model": "small-model", "temperature": 0.25});
    page.ok("define_agent", json!({"agent": poet}));
    let run = page.ok("run", json!({"prompt": "A poem.", "agent": "poet"}));
    assert_eq!(run["status"], "finished", "{run}");
    let body = &bodies(&page)[0];
    assert_eq!(body["model"], "small-model");
    assert_eq!(body["temperature"], 0.25);
    // Another wire format than the configured one cannot be used with its key.
    let mut other = spec("other", &[], &[]);
    other["model"] = json!({"provider": "anthropic"});
    page.ok("define_agent", json!({"agent": other}));
    let run = page.ok("run", json!({"prompt": "A poem.", "agent": "other"}));
    assert_eq!(run["status"], "failed");
    assert!(
        run["message"]
            .as_str()
            .unwrap()
            .contains("asks for the anthropic provider"),
        "{run}"
    );
    assert_eq!(
        page.transport.requests().len(),
        1,
        "no request was sent for it"
    );
    // Out of range: refused.
    let mut hot = spec("hot", &[], &[]);
    hot["model"] = json!({"temperature": 7});
    let (_, message) = page.err("define_agent", json!({"agent": hot}));
    assert!(message.contains("temperature"), "{message}");
}

#[test]
fn a_deleted_project_leaves_no_agents_or_conversation_behind() {
    let page = dm_page();
    page.ok(
        "run",
        json!({"prompt": "Hello blacksmith", "preset": "dungeon_master"}),
    );
    let export = page.ok("export_project", json!({}));
    page.ok(
        "define_agent",
        json!({"agent": spec("scout", &["read_chapter"], &[])}),
    );
    let id = export["project"]["id"].clone();
    page.ok("delete_project", json!({"id": id}));
    // The same project again, from its export (which has no agents or conversation).
    page.ok("import_project", json!({"document": export}));
    let list = page.ok("list_agents", json!({}));
    assert!(
        !list["agents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "scout"),
        "{list}"
    );
    let before = page.transport.requests().len();
    page.ok(
        "run",
        json!({"prompt": "Hello innkeeper", "preset": "dungeon_master"}),
    );
    let first = &bodies(&page)[before];
    assert!(
        !first["messages"].to_string().contains("blacksmith"),
        "the deleted project's conversation is gone: {first}"
    );
}
