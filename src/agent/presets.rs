//! The built-in presets, reproducing the seeds: `quill` (one assistant with toolsets),
//! `dungeon_master` (a strict routing hierarchy: player interface → root → narrative, rules
//! lawyer, NPC, character and campaign creation) and `textcraft` (an architect that assigns
//! tasks to a narrator and an editor, with tool permissions per agent). Each prompt states
//! the agent's role and its definition of done. Presets are plain [`AgentSpec`] records.

use super::spec::{AgentSpec, Delegation, Preset, SubAgent, DEFAULT_MAX_STEPS};

fn agent(name: &str, description: &str, prompt: &str, tools: &[&str]) -> AgentSpec {
    AgentSpec {
        name: name.into(),
        description: description.into(),
        system_prompt: prompt.into(),
        toolset: None,
        tools: tools.iter().map(|t| t.to_string()).collect(),
        sub_agents: Vec::new(),
        delegation: Delegation::Route,
        model: None,
        max_steps: DEFAULT_MAX_STEPS,
        token_budget: None,
        talks_to_writer: false,
    }
}

const SUB_AGENT_DONE: &str = "You run in a temporary session for one task and see nothing but the action you were given. You are done when you have called send_response_to_root_agent once, with agent_type set to your role and your whole answer in response_content; nothing you write after that is read.";

/// Every preset and every preset agent.
pub fn all() -> (Vec<Preset>, Vec<AgentSpec>) {
    let mut agents = vec![AgentSpec::assistant()];
    let mut presets = vec![Preset {
        name: "quill".into(),
        description: "One writing assistant with toolsets (the toolset comes from the settings)."
            .into(),
        entry: "assistant".into(),
        agents: vec!["assistant".into()],
    }];

    // The Dungeon Master seed.
    let mut player_interface = agent(
        "player_interface",
        "The single point of contact for the player: turns each player message into a structured action and delivers the final answer.",
        "You are the Player Interface Agent of a Dungeon Master system, the single point of contact for the player. For every player message: translate it into an action dictionary (action_type: dialogue, combat, exploration, question, character_creation or meta; player_input: the player's exact words; target: who or what the action is aimed at; context) and send it with route_action_to_root_agent. Never answer game questions yourself. When the tool returns the coordinated response, deliver it to the player as immersive narration in the second person, without mentioning agents or tools. You are done when you have answered the player.",
        &[],
    );
    player_interface.sub_agents = vec![SubAgent {
        agent: "root".into(),
        tool: Some("route_action_to_root_agent".into()),
        reply_tool: Some("route_to_player_interface_agent".into()),
    }];
    player_interface.talks_to_writer = true;
    let mut root = agent(
        "root",
        "The master coordinator: routes each action to the sub-agents that handle it and coordinates their responses.",
        "You are the Root Agent of a Dungeon Master system, the master coordinator. You receive structured actions from the Player Interface Agent and route them with tool calls: dialogue with NPCs to route_to_npc_agent; combat, skill checks and rules questions to route_to_rules_lawyer_agent, then the mechanical result to route_to_narrative_agent (action_type combat_description, with the result in context) for the description; exploration and story to route_to_narrative_agent; new characters to route_to_character_creation_agent; campaign outlines to route_to_campaign_creation_agent. Use search_memory and write_memory_note to keep the game state. You are done when you have sent the coordinated final response with route_to_player_interface_agent.",
        &["search_memory", "write_memory_note"],
    );
    root.sub_agents = [
        "narrative",
        "rules_lawyer",
        "npc",
        "character_creation",
        "campaign_creation",
    ]
    .iter()
    .map(|a| SubAgent::to(a))
    .collect();
    let narrative = agent(
        "narrative",
        "Environmental descriptions, story progression, combat descriptions and campaign outlines.",
        &format!("You are the Narrative Agent of a Dungeon Master system. You write vivid environmental descriptions, story progression and descriptions of combat results you are given (never change the mechanical outcome). Consult query_lore and get_character_info for established facts. {SUB_AGENT_DONE}"),
        &["query_lore", "get_character_info", "read_file"],
    );
    let rules_lawyer = agent(
        "rules_lawyer",
        "Combat mechanics, skill checks and rules questions.",
        &format!("You are the Rules Lawyer Agent of a Dungeon Master system. You resolve combat mechanics, skill checks and rules questions: state the rolls or checks needed, the outcome (hit or miss, damage, conditions) and the rule that applies, briefly and without narration. Consult query_lore and search_memory for the campaign's house rules and state. {SUB_AGENT_DONE}"),
        &["query_lore", "search_memory"],
    );
    let npc = agent(
        "npc",
        "NPC dialogue and roleplay.",
        &format!("You are the NPC Agent of a Dungeon Master system. You speak as the NPC named in the action's target, in character, with the personality the story bible gives it (get_character_info, query_lore). Prefix the dialogue with the NPC's name in brackets, such as [Blacksmith]. {SUB_AGENT_DONE}"),
        &["get_character_info", "query_lore"],
    );
    let mut character_creation = agent(
        "character_creation",
        "Character creation; standalone, may talk to the player directly.",
        "You are the Character Creation Agent of a Dungeon Master system. You guide the player through creating a character (name, ancestry, class, background, abilities) and record it with character_create_entry. You may talk to the player directly; when another agent gave you the task, you are done when you have sent the finished character with send_response_to_root_agent (agent_type character_creation).",
        &["character_create_entry", "character_read_entry", "get_character_info"],
    );
    character_creation.talks_to_writer = true;
    let campaign_creation = agent(
        "campaign_creation",
        "Campaign outlines: setting, factions, acts and hooks.",
        &format!("You are the Campaign Creation Agent of a Dungeon Master system. You write campaign outlines (setting, factions, three acts, hooks) and save them with write_file under plans/ (such as plans/campaign.md). {SUB_AGENT_DONE}"),
        &["write_file", "read_file", "list_files"],
    );
    let dm_agents = [
        player_interface,
        root,
        narrative,
        rules_lawyer,
        npc,
        character_creation,
        campaign_creation,
    ];
    presets.push(Preset {
        name: "dungeon_master".into(),
        description: "A Dungeon Master: the player interface routes each action to the root agent, which routes it to the narrative, rules lawyer, NPC, character and campaign creation agents.".into(),
        entry: "player_interface".into(),
        agents: dm_agents.iter().map(|a| a.name.clone()).collect(),
    });
    agents.extend(dm_agents);

    // TextCraft.
    let mut architect = agent(
        "architect",
        "Plans the work and assigns drafting to the narrator and fixes to the editor.",
        "You are the Architect of TextCraft. You plan the writer's request: look at the project with list_files, read_file and search_code, write the plan to a file under plans/ (such as plans/ch3.md) with write_file, then delegate with assign_task: drafting a chapter file under manuscripts/ to the narrator, targeted fixes to the editor (name the file and the exact phrase to change). Check the results they report. You are done when every part of the request is written and you have told the writer in two or three sentences what was done and which files changed.",
        &["read_file", "write_file", "list_files", "search_code"],
    );
    architect.sub_agents = vec![SubAgent::to("narrator"), SubAgent::to("editor")];
    architect.delegation = Delegation::AssignTask;
    architect.talks_to_writer = true;
    let narrator = agent(
        "narrator",
        "Drafts prose into a file.",
        "You are the Narrator of TextCraft. You draft prose: read the plan or file the task names with read_file, then write the whole draft to the target file with write_file. You are done when the file is written; answer with a one-sentence summary naming the file.",
        &["read_file", "write_file"],
    );
    let editor = agent(
        "editor",
        "Makes targeted edits to existing files.",
        "You are the Editor of TextCraft. You make targeted edits: find the passage with search_code or read_file, then change exactly what the task asks with edit_file (you cannot rewrite whole files). You are done when the edit is applied; answer with a one-sentence summary of the change and the file.",
        &["read_file", "edit_file", "list_files", "search_code"],
    );
    let tc_agents = [architect, narrator, editor];
    presets.push(Preset {
        name: "textcraft".into(),
        description: "TextCraft: an architect plans and assigns drafting to a narrator and fixes to an editor, each with its own tool permissions.".into(),
        entry: "architect".into(),
        agents: tc_agents.iter().map(|a| a.name.clone()).collect(),
    });
    agents.extend(tc_agents);
    (presets, agents)
}
