//! Agents: each project's defined agents and its conversation with each agent a run started
//! with, as loaded from the store, and the agent sessions that sub-agents run in.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use crate::agent::AgentSpec;
use crate::llm::Message;

/// Owns the defined agents, the kept conversations and the agent-session counters.
#[derive(Default)]
pub(in crate::core) struct Agents {
    /// Each project's defined agents (loaded once from the store).
    defined: RefCell<BTreeMap<String, Vec<AgentSpec>>>,
    /// Each project's conversation with each agent a run started with (without the system
    /// prompt), by project and agent.
    conversations: RefCell<BTreeMap<(String, String), Vec<Message>>>,
    /// Agent sessions alive now (a finished run leaves none).
    open_agent_sessions: Cell<usize>,
    /// Numbers agent sessions.
    agent_session_seq: Cell<u64>,
}

impl Agents {
    /// The defined agents of `project`, if they were loaded.
    pub(in crate::core) fn defined(&self, project: &str) -> Option<Vec<AgentSpec>> {
        self.defined.borrow().get(project).cloned()
    }

    /// Keep `specs` as the defined agents of `project`.
    pub(in crate::core) fn set_defined(&self, project: &str, specs: Vec<AgentSpec>) {
        self.defined.borrow_mut().insert(project.to_string(), specs);
    }

    /// Add `spec` to the defined agents of `project`, replacing the one of its name.
    pub(in crate::core) fn define(&self, project: &str, spec: AgentSpec) {
        let mut defined = self.defined.borrow_mut();
        let list = defined.entry(project.to_string()).or_default();
        list.retain(|a| a.name != spec.name);
        list.push(spec);
    }

    /// Drop the defined agent `name` of `project`.
    pub(in crate::core) fn undefine(&self, project: &str, name: &str) {
        if let Some(list) = self.defined.borrow_mut().get_mut(project) {
            list.retain(|a| a.name != name);
        }
    }

    /// The kept conversation of `project` with `agent`, if it was loaded.
    pub(in crate::core) fn conversation(&self, project: &str, agent: &str) -> Option<Vec<Message>> {
        self.conversations
            .borrow()
            .get(&(project.to_string(), agent.to_string()))
            .cloned()
    }

    /// Keep `messages` as the conversation of `project` with `agent`. Messages read from the
    /// store (`replace: false`) do not replace a conversation kept meanwhile; a run's own
    /// (`replace: true`) do.
    pub(in crate::core) fn keep_conversation(
        &self,
        project: &str,
        agent: &str,
        messages: Vec<Message>,
        replace: bool,
    ) {
        let mut conversations = self.conversations.borrow_mut();
        let key = (project.to_string(), agent.to_string());
        if replace || !conversations.contains_key(&key) {
            conversations.insert(key, messages);
        }
    }

    /// Forget everything kept of `project` (it was deleted).
    pub(in crate::core) fn forget_project(&self, project: &str) {
        self.defined.borrow_mut().remove(project);
        self.conversations
            .borrow_mut()
            .retain(|(p, _), _| p != project);
    }

    /// How many agent sessions are alive now.
    pub(in crate::core) fn open_agent_sessions(&self) -> usize {
        self.open_agent_sessions.get()
    }

    /// The number of a new agent session.
    pub(in crate::core) fn next_agent_session(&self) -> u64 {
        let n = self.agent_session_seq.get() + 1;
        self.agent_session_seq.set(n);
        n
    }

    /// An agent session opened.
    pub(in crate::core) fn agent_session_opened(&self) {
        self.open_agent_sessions
            .set(self.open_agent_sessions.get() + 1);
    }

    /// An agent session ended.
    pub(in crate::core) fn agent_session_closed(&self) {
        self.open_agent_sessions
            .set(self.open_agent_sessions.get().saturating_sub(1));
    }
}
