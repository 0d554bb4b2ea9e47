//! The sync links: for each shared project, the server it is shared through and how the
//! connection stands.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::Serialize;
use ts_rs::TS;

use crate::core::saving::Notify;
use crate::env::{SyncSocket, SyncTransport};
use crate::llm::client::Sleeper;
use crate::replica::Replica;

/// How a project's sync connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(rename = "SyncState")]
pub enum SyncState {
    /// Not shared (never connected, or disconnected).
    Disconnected,
    /// Opening the connection, or waiting for the server to take the token.
    Connecting,
    /// Connected: changes go both ways as they are made.
    Connected,
    /// The server cannot be reached; changes made meanwhile are kept and sent on reconnect.
    Offline,
    /// The server refused the token; nothing was exchanged.
    Unauthorized,
}

/// Another client of a shared project, as its awareness state says.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(rename = "SyncPeer", optional_fields)]
pub struct Peer {
    /// Its Yjs client id.
    pub client: u64,
    /// The name it goes by.
    pub name: String,
    /// The chapter its cursor is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chapter: Option<String>,
    /// Its cursor (a char offset in that chapter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor: Option<usize>,
}

/// One project's link to a sync server.
pub(in crate::core) struct Link {
    /// The server's address.
    pub(in crate::core) url: String,
    /// The token it is given.
    pub(in crate::core) token: String,
    /// The name this device goes by for the others.
    pub(in crate::core) name: String,
    pub(in crate::core) state: Cell<SyncState>,
    /// Why it is offline or unauthorized.
    pub(in crate::core) reason: RefCell<Option<String>>,
    /// Updates sent that the server has not acknowledged.
    pub(in crate::core) unacked: Cell<usize>,
    /// Set by `sync_disconnect`: the link's task ends.
    pub(in crate::core) stopped: Cell<bool>,
    /// Wakes the link's task (a save to send, a disconnect).
    pub(in crate::core) wake: Rc<Notify>,
    /// The open connection.
    pub(in crate::core) socket: RefCell<Option<Rc<dyn SyncSocket>>>,
    /// The other clients, by Yjs client id, with the clock of their last state.
    pub(in crate::core) peers: RefCell<BTreeMap<u64, (u32, Option<Peer>)>>,
    /// The clock of this client's awareness state.
    pub(in crate::core) clock: Cell<u32>,
    /// Where this client's cursor was when its awareness state was last sent.
    pub(in crate::core) shown: RefCell<Option<(Option<String>, usize)>>,
    /// Wakes a `sync_connect` waiting for a project that exists only on the server.
    pub(in crate::core) arrived: Rc<Notify>,
}

impl Link {
    pub(in crate::core) fn new(url: String, token: String, name: String) -> Self {
        Self {
            url,
            token,
            name,
            state: Cell::new(SyncState::Connecting),
            reason: RefCell::new(None),
            unacked: Cell::new(0),
            stopped: Cell::new(false),
            wake: Rc::new(Notify::default()),
            socket: RefCell::new(None),
            peers: RefCell::new(BTreeMap::new()),
            clock: Cell::new(0),
            shown: RefCell::new(None),
            arrived: Rc::new(Notify::default()),
        }
    }

    /// The other clients connected now, by client id.
    pub(in crate::core) fn peers(&self) -> Vec<Peer> {
        self.peers
            .borrow()
            .values()
            .filter_map(|(_, p)| p.clone())
            .collect()
    }
}

/// The way to reach sync servers, and to wait between attempts.
type Reach = (Rc<dyn SyncTransport>, Rc<dyn Sleeper>);

/// Owns the way to reach sync servers, every project's link, and the documents of projects
/// being fetched from a server (not open yet: they exist nowhere else).
#[derive(Default)]
pub(in crate::core) struct SyncLinks {
    reach: RefCell<Option<Reach>>,
    links: RefCell<BTreeMap<String, Rc<Link>>>,
    fetching: RefCell<BTreeMap<String, Replica>>,
    /// Whether the device said it has no network: links then wait instead of connecting.
    offline: Cell<bool>,
}

impl SyncLinks {
    pub(in crate::core) fn set_transport(
        &self,
        transport: Rc<dyn SyncTransport>,
        sleeper: Rc<dyn Sleeper>,
    ) {
        *self.reach.borrow_mut() = Some((transport, sleeper));
    }

    pub(in crate::core) fn transport(&self) -> Option<Reach> {
        self.reach.borrow().clone()
    }

    /// Keep the document of a project being fetched.
    pub(in crate::core) fn set_pending(&self, project: &str, replica: Replica) {
        self.fetching
            .borrow_mut()
            .insert(project.to_string(), replica);
    }

    /// Read the document of a project being fetched.
    pub(in crate::core) fn with_pending<T>(
        &self,
        project: &str,
        f: impl FnOnce(&Replica) -> T,
    ) -> Option<T> {
        self.fetching.borrow().get(project).map(f)
    }

    /// Change the document of a project being fetched.
    pub(in crate::core) fn update_pending<T>(
        &self,
        project: &str,
        f: impl FnOnce(&mut Replica) -> T,
    ) -> Option<T> {
        self.fetching.borrow_mut().get_mut(project).map(f)
    }

    /// Take the document of a project fetched (to open the project).
    pub(in crate::core) fn take_pending(&self, project: &str) -> Option<Replica> {
        self.fetching.borrow_mut().remove(project)
    }

    /// Project `project`'s link, if it has one.
    pub(in crate::core) fn get(&self, project: &str) -> Option<Rc<Link>> {
        self.links.borrow().get(project).cloned()
    }

    /// Put a new link for `project`, returning the one it replaces.
    pub(in crate::core) fn insert(&self, project: &str, link: Rc<Link>) -> Option<Rc<Link>> {
        self.links.borrow_mut().insert(project.to_string(), link)
    }

    /// Take `project`'s link away (and the document of the project, if it was being
    /// fetched).
    pub(in crate::core) fn remove(&self, project: &str) -> Option<Rc<Link>> {
        self.fetching.borrow_mut().remove(project);
        self.links.borrow_mut().remove(project)
    }

    /// Whether the device has no network.
    pub(in crate::core) fn is_offline(&self) -> bool {
        self.offline.get()
    }

    /// Note whether the device has a network; returns every link, to close or wake.
    pub(in crate::core) fn set_offline(&self, offline: bool) -> Vec<(String, Rc<Link>)> {
        self.offline.set(offline);
        self.links
            .borrow()
            .iter()
            .map(|(project, link)| (project.clone(), Rc::clone(link)))
            .collect()
    }

    /// Wake `project`'s link (a save to send).
    pub(in crate::core) fn wake(&self, project: &str) {
        if let Some(link) = self.get(project) {
            link.wake.notify_all();
        }
    }
}
