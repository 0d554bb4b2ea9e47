//! Sync: a project shared with other devices and co-authors through a Yjs server
//! (Hocuspocus), over the environment's [`SyncTransport`].
//!
//! `sync_connect` gives the open project (or, with `project`, one that exists only on the
//! server, fetched then opened) a link, and a background task that keeps it connected:
//! 1. it opens the connection and sends the token, then sync step 1 (this document's state
//!    vector) and this client's awareness state;
//! 2. it answers the server's step 1 with what the server lacks (edits made offline go
//!    there), applies the updates that come (as changes of origin `remote:<client>`, through
//!    the one edit path: [`crate::replica::apply_incoming`]), and sends each update made here
//!    once it is saved; the server acknowledges each, and those not yet acknowledged are the
//!    `unsent` count;
//! 3. when the connection drops it is `offline` and tries again, backing off up to 30 s; a
//!    refused token makes it `unauthorized` and it stops, local work untouched.
//!
//! The page hears `sync_status` whenever the state, the unsent count or the peers change.

use std::rc::Rc;

use futures_util::future::{select, Either, FutureExt, LocalBoxFuture};
use serde::{Deserialize, Serialize};
use ts_rs::TS;
use yrs::sync::awareness::{AwarenessUpdate, AwarenessUpdateEntry};
use yrs::updates::decoder::Decode;
use yrs::updates::encoder::Encode;

use super::memory::MemoryChangedEvent;
use super::parts::{Link, Peer, SyncState};
use super::results::ProjectSummary;
use super::saving::Open;
use super::{mark_touched, Core, Touched};
use crate::commands::Origin;
use crate::env::{SyncSocket, SyncTransport};
use crate::error::Error;
use crate::llm::client::Sleeper;
use crate::persist::ChangeRecord;
use crate::replica::wire::{self, Frame};
use crate::replica::{apply_incoming, Replica};

/// How long a link waits before trying again, at most (ms).
const BACKOFF_MOST_MS: u64 = 30_000;
/// How often this client renews its awareness state (the server drops a connection that is
/// silent for 60 s).
const RENEW_MS: u64 = 15_000;
/// How long `sync_connect {project}` waits for the server to send the project.
const FETCH_WAIT_MS: u64 = 30_000;
/// Why a link is offline while the device has no network.
const NO_NETWORK: &str = "this device is offline";

/// `sync_connect` params.
#[derive(Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "SyncConnectParams", optional_fields)]
pub(in crate::core) struct SyncConnect {
    /// The server's address (`ws://` or `wss://`).
    url: String,
    /// A token the server accepts for the project.
    token: String,
    /// A project that exists only on the server: fetched, then opened. Without it, the open
    /// project is shared.
    #[serde(default)]
    project: Option<String>,
    /// The name this device goes by for the others (default `writer`).
    #[serde(default)]
    name: Option<String>,
}

/// `sync_disconnect` and `sync_status` params.
#[derive(Deserialize, TS)]
#[ts(rename = "SyncProjectParams", optional_fields)]
pub(in crate::core) struct SyncProject {
    /// The project (default: the open one).
    #[serde(default)]
    project: Option<String>,
}

/// `sync_network` params: the page tells the core when the device loses or regains its
/// network (a browser may keep a dead connection open without saying so).
#[derive(Deserialize, TS)]
#[ts(rename = "SyncNetworkParams")]
pub(in crate::core) struct SyncNetwork {
    /// Whether the device has a network.
    online: bool,
}

/// A project's sync state, as `sync_status` returns it and the `sync_status` event says it.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(rename = "SyncStatus", optional_fields)]
pub(in crate::core) struct SyncStatus {
    /// The project.
    pub(super) project: String,
    /// How its connection stands.
    pub(super) status: SyncState,
    /// Updates made here that the server has not yet acknowledged.
    pub(super) unsent: usize,
    /// The server, while shared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) url: Option<String>,
    /// Why it is offline or unauthorized.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) reason: Option<String>,
    /// The other clients connected to the project.
    pub(super) peers: Vec<Peer>,
}

/// This client's awareness state, as JSON text.
#[derive(Serialize)]
struct Presence<'a> {
    user: User<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chapter: Option<&'a str>,
    cursor: usize,
}

#[derive(Serialize, Deserialize)]
struct User<'a> {
    name: &'a str,
}

/// Another client's awareness state.
#[derive(Deserialize)]
struct TheirPresence {
    user: Option<TheirUser>,
    chapter: Option<String>,
    cursor: Option<usize>,
}

#[derive(Deserialize)]
struct TheirUser {
    name: Option<String>,
}

/// How a connection ended.
enum Ended {
    /// It closed or failed: try again.
    Closed(String),
    /// The server refused the token.
    Refused(String),
    /// `sync_disconnect`.
    Stopped,
}

impl Core {
    /// The same core, able to share projects through sync servers reached with `transport`,
    /// waiting between attempts with `sleeper`.
    pub fn with_sync(self, transport: Rc<dyn SyncTransport>, sleeper: Rc<dyn Sleeper>) -> Self {
        self.shared.sync.set_transport(transport, sleeper);
        self
    }

    /// Serve `sync_connect`.
    pub(super) async fn sync_connect(&self, p: SyncConnect) -> Result<SyncStatus, Error> {
        const REQUEST: &str = "sync_connect";
        let url = p.url.trim().to_string();
        if !(url.starts_with("ws://") || url.starts_with("wss://")) {
            return Err(super::invalid(
                REQUEST,
                "'url' must be a ws:// or wss:// address",
            ));
        }
        if p.token.trim().is_empty() {
            return Err(super::invalid(REQUEST, "'token' must not be empty"));
        }
        let name = p
            .name
            .map(|n| n.trim().chars().take(60).collect::<String>())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "writer".into());
        if self.sync.transport().is_none() {
            return Err(super::invalid(
                REQUEST,
                "this core cannot reach sync servers",
            ));
        }
        let spawn = self
            .jobs
            .spawner()
            .ok_or_else(|| super::invalid(REQUEST, "this core cannot run background work"))?;
        let project = match &p.project {
            Some(id) if !id.trim().is_empty() => id.trim().to_string(),
            _ => self.current()?,
        };
        let fetch = !self.projects.is_open(&project)
            && self
                .env
                .store
                .get(crate::store::Table::Projects, &project)
                .await?
                .is_none();
        if fetch && p.project.is_none() {
            return Err(super::invalid(REQUEST, "no project is open"));
        }
        if fetch && self.sync.is_offline() {
            return Err(super::invalid(
                REQUEST,
                "this device is offline: a project that exists only on the server cannot be fetched",
            ));
        }
        if !fetch && !self.projects.is_open(&project) {
            // A stored project: open it first.
            self.open_project(super::OpenProject {
                id: project.clone(),
            })
            .await?;
        }
        let link = Rc::new(Link::new(url, p.token, name));
        if let Some(old) = self.sync.insert(&project, Rc::clone(&link)) {
            stop(&old);
        }
        if fetch {
            self.sync.set_pending(
                &project,
                Replica::new(crate::replica::client_id(self.env.ids.as_ref())),
            );
        }
        let core = self.background(&project);
        let task_link = Rc::clone(&link);
        let task_project = project.clone();
        spawn(Box::pin(async move {
            core.keep_linked(&task_project, task_link).await;
        }));
        if fetch {
            self.wait_for_project(&project, &link).await?;
            *self.current.borrow_mut() = Some(project.clone());
            self.emit_projects_changed();
        }
        Ok(self.sync_state(&project, &link))
    }

    /// Serve `sync_disconnect`: the project stays, as it is, and is no longer shared.
    pub(super) fn sync_disconnect(&self, p: SyncProject) -> Result<SyncStatus, Error> {
        let project = match p.project {
            Some(id) => id,
            None => self.current()?,
        };
        if let Some(link) = self.sync.remove(&project) {
            stop(&link);
        }
        let status = self.sync_status_of(&project);
        self.emit(status.clone());
        Ok(status)
    }

    /// Serve `sync_network`: offline, every link drops its connection and waits; online,
    /// every link connects again at once. Returns the links' states.
    pub(super) fn sync_network(&self, p: SyncNetwork) -> Vec<SyncStatus> {
        let links = self.sync.set_offline(!p.online);
        for (_, link) in &links {
            if !p.online {
                if let Some(socket) = link.socket.borrow_mut().take() {
                    socket.close();
                }
            }
            link.wake.notify_all();
        }
        links
            .iter()
            .map(|(project, link)| self.sync_state(project, link))
            .collect()
    }

    /// Serve `sync_status`.
    pub(super) fn sync_status(&self, p: SyncProject) -> Result<SyncStatus, Error> {
        let project = match p.project {
            Some(id) => id,
            None => self.current()?,
        };
        Ok(self.sync_status_of(&project))
    }

    fn sync_status_of(&self, project: &str) -> SyncStatus {
        match self.sync.get(project) {
            Some(link) => self.sync_state(project, &link),
            None => SyncStatus {
                project: project.to_string(),
                status: SyncState::Disconnected,
                unsent: self.unsent(project),
                url: None,
                reason: None,
                peers: Vec::new(),
            },
        }
    }

    fn sync_state(&self, project: &str, link: &Link) -> SyncStatus {
        let unsent = self.unsent(project) + link.unacked.get();
        SyncStatus {
            project: project.to_string(),
            status: link.state.get(),
            unsent,
            url: Some(link.url.clone()),
            reason: link.reason.borrow().clone(),
            peers: link.peers(),
        }
    }

    /// Set the link's state and tell the page.
    fn set_state(&self, project: &str, link: &Link, state: SyncState, reason: Option<String>) {
        link.state.set(state);
        *link.reason.borrow_mut() = reason;
        self.emit(self.sync_state(project, link));
    }

    /// Wait until the server has sent a project that exists only there, and open it.
    async fn wait_for_project(&self, project: &str, link: &Rc<Link>) -> Result<(), Error> {
        let Some((_, sleeper)) = self.sync.transport() else {
            return Ok(());
        };
        let deadline = sleeper.sleep(FETCH_WAIT_MS).shared();
        loop {
            if self.projects.is_open(project) {
                return Ok(());
            }
            match link.state.get() {
                SyncState::Unauthorized => {
                    self.sync.remove(project);
                    stop(link);
                    return Err(Error::NoProject(format!(
                        "the sync server refused the token for project '{project}': {}",
                        link.reason.borrow().clone().unwrap_or_default()
                    )));
                }
                _ if link.stopped.get() => {
                    return Err(Error::NoProject(format!(
                        "project '{project}' was not fetched: the link was closed"
                    )));
                }
                _ => {}
            }
            let arrived = link.arrived.wait();
            match select(arrived, deadline.clone()).await {
                Either::Left(_) => {}
                Either::Right(_) => {
                    self.sync.remove(project);
                    stop(link);
                    return Err(Error::NoProject(format!(
                        "the sync server did not send project '{project}' (is its id right?)"
                    )));
                }
            }
        }
    }

    /// Keep `project`'s link connected until it is stopped.
    async fn keep_linked(&self, project: &str, link: Rc<Link>) {
        let Some((transport, sleeper)) = self.sync.transport() else {
            return;
        };
        let mut backoff = 500;
        while !link.stopped.get() {
            if self.sync.is_offline() {
                // Wait for the network (or a save, whose unsent count the page shows).
                let woke = link.wake.wait();
                self.set_state(project, &link, SyncState::Offline, Some(NO_NETWORK.into()));
                woke.await;
                backoff = 500;
                continue;
            }
            self.set_state(project, &link, SyncState::Connecting, None);
            let ended = match transport.connect(&link.url).await {
                Err(e) => Ended::Closed(e),
                Ok(socket) => {
                    *link.socket.borrow_mut() = Some(Rc::clone(&socket));
                    let ended = self.serve(project, &link, &socket, sleeper.as_ref()).await;
                    socket.close();
                    link.socket.borrow_mut().take();
                    link.peers.borrow_mut().clear();
                    link.unacked.set(0);
                    if link.state.get() == SyncState::Connected {
                        backoff = 500;
                    }
                    ended
                }
            };
            match ended {
                Ended::Stopped => break,
                Ended::Refused(reason) => {
                    self.set_state(project, &link, SyncState::Unauthorized, Some(reason));
                    link.arrived.notify_all();
                    return;
                }
                Ended::Closed(reason) => {
                    if link.stopped.get() {
                        break;
                    }
                    if self.sync.is_offline() {
                        // The loop's start waits for the network.
                        continue;
                    }
                    self.set_state(project, &link, SyncState::Offline, Some(reason));
                }
            }
            let woke = link.wake.wait();
            let _ = select(sleeper.sleep(backoff), woke).await;
            backoff = (backoff * 2).min(BACKOFF_MOST_MS);
        }
    }

    /// Talk to the server over one open connection until it ends.
    async fn serve(
        &self,
        project: &str,
        link: &Rc<Link>,
        socket: &Rc<dyn SyncSocket>,
        sleeper: &dyn Sleeper,
    ) -> Ended {
        // What this device made is saved before it is sent.
        let _ = self.flush(project, false).await;
        let Some(sv) = self.with_replica(project, Replica::state_vector) else {
            return Ended::Stopped;
        };
        let hello = [
            wire::token(project, &link.token),
            wire::step1(project, &sv),
            wire::awareness(project, &self.presence(project, link)),
        ];
        for frame in hello {
            if let Err(e) = socket.send(&frame) {
                return Ended::Closed(e);
            }
        }
        let mut authenticated = false;
        let mut next: LocalBoxFuture<'static, Option<Vec<u8>>> = socket.next();
        loop {
            if link.stopped.get() {
                return Ended::Stopped;
            }
            if self.sync.is_offline() {
                return Ended::Closed(NO_NETWORK.into());
            }
            let woke = link.wake.wait();
            if authenticated {
                if let Err(e) = self.send_saved(project, link, socket).await {
                    return Ended::Closed(e);
                }
                // The cursor moved: the others see where.
                if self.cursor(project) != *link.shown.borrow() {
                    let frame = wire::awareness(project, &self.presence(project, link));
                    if let Err(e) = socket.send(&frame) {
                        return Ended::Closed(e);
                    }
                }
            }
            let tick = sleeper.sleep(RENEW_MS);
            let waits = select(woke, tick);
            match select(next, waits).await {
                Either::Left((frame, _)) => {
                    let Some(frame) = frame else {
                        return Ended::Closed("the connection closed".into());
                    };
                    next = socket.next();
                    match wire::decode(project, &frame) {
                        Ok(Some(Frame::Authenticated { .. })) => {
                            authenticated = true;
                            self.set_state(project, link, SyncState::Connected, None);
                        }
                        Ok(Some(Frame::Denied(reason))) => return Ended::Refused(reason),
                        Ok(Some(Frame::TokenRequest)) => {
                            let _ = socket.send(&wire::token(project, &link.token));
                        }
                        Ok(Some(Frame::Step1(sv))) => {
                            let _ = self.flush(project, false).await;
                            let diff = self.with_replica(project, |r| r.diff(&sv));
                            if let Some(Ok(diff)) = diff {
                                self.projects.update(project, Open::take_outbox);
                                link.unacked.set(link.unacked.get() + 1);
                                if let Err(e) = socket.send(&wire::step2(project, &diff)) {
                                    return Ended::Closed(e);
                                }
                            }
                        }
                        Ok(Some(Frame::Update(update))) => {
                            self.receive(project, link, &update).await;
                        }
                        Ok(Some(Frame::Awareness(update))) => {
                            self.peers_seen(project, link, &update)
                        }
                        Ok(Some(Frame::Ack(_))) => {
                            link.unacked.set(link.unacked.get().saturating_sub(1));
                            if link.unacked.get() == 0 {
                                self.emit(self.sync_state(project, link));
                            }
                        }
                        Ok(Some(Frame::Close(reason))) => return Ended::Closed(reason),
                        Ok(Some(Frame::Other(_)) | None) => {}
                        Err(e) => return Ended::Closed(e.to_string()),
                    }
                }
                Either::Right((Either::Right(_), pending_next)) => {
                    // Renew this client's awareness state: it keeps the connection alive.
                    next = pending_next;
                    let frame = wire::awareness(project, &self.presence(project, link));
                    if let Err(e) = socket.send(&frame) {
                        return Ended::Closed(e);
                    }
                }
                Either::Right((Either::Left(_), pending_next)) => next = pending_next,
            }
        }
    }

    /// Send the updates made here since the last send, once saved.
    async fn send_saved(
        &self,
        project: &str,
        link: &Link,
        socket: &Rc<dyn SyncSocket>,
    ) -> Result<(), String> {
        self.mirror_deferred(project);
        if self.projects.read(project, |o| o.outbox.is_empty()) != Some(false) {
            return Ok(());
        }
        let _ = self.flush(project, false).await;
        let (updates, _) = self
            .projects
            .update(project, Open::take_outbox)
            .unwrap_or_default();
        for update in &updates {
            socket.send(&wire::update(project, update))?;
        }
        link.unacked.set(link.unacked.get() + updates.len());
        self.emit(self.sync_state(project, link));
        Ok(())
    }

    /// The updates made here to open project `project` not yet sent (see [`Open::unsent`]).
    fn unsent(&self, project: &str) -> usize {
        self.mirror_deferred(project);
        self.projects.read(project, Open::unsent).unwrap_or(0)
    }

    /// Run `f` on the project's document: the open project's, or the one being fetched.
    fn with_replica<T>(&self, project: &str, f: impl FnOnce(&Replica) -> T) -> Option<T> {
        if self.projects.is_open(project) {
            self.mirror_deferred(project);
            self.projects.read(project, |o| f(&o.replica))
        } else {
            self.sync.with_pending(project, f)
        }
    }

    /// The writer's chapter and cursor in the project, if it is open.
    fn cursor(&self, project: &str) -> Option<(Option<String>, usize)> {
        self.projects.read(project, |o| {
            let ui = &o.session.project.ui;
            (ui.active_chapter.clone(), ui.cursor)
        })
    }

    /// This client's awareness state, encoded, with its clock moved on.
    fn presence(&self, project: &str, link: &Link) -> Vec<u8> {
        let client = self
            .with_replica(project, Replica::client)
            .unwrap_or_default();
        let shown = self.cursor(project);
        *link.shown.borrow_mut() = shown.clone();
        let (chapter, cursor) = shown.unwrap_or_default();
        let json = serde_json::to_string(&Presence {
            user: User { name: &link.name },
            chapter: chapter.as_deref(),
            cursor,
        })
        .unwrap_or_default();
        link.clock.set(link.clock.get() + 1);
        let mut clients = std::collections::HashMap::new();
        clients.insert(
            yrs::ClientID::new(client),
            AwarenessUpdateEntry {
                clock: link.clock.get(),
                json: json.into(),
            },
        );
        AwarenessUpdate { clients }.encode_v1()
    }

    /// Take in the other clients' awareness states.
    fn peers_seen(&self, project: &str, link: &Link, update: &[u8]) {
        let Ok(update) = AwarenessUpdate::decode_v1(update) else {
            return;
        };
        let me = self.with_replica(project, Replica::client);
        let mut changed = false;
        {
            let mut peers = link.peers.borrow_mut();
            for (client, entry) in update.clients {
                let client = client.get();
                if Some(client) == me {
                    continue;
                }
                if peers
                    .get(&client)
                    .is_some_and(|(clock, _)| *clock >= entry.clock)
                {
                    continue;
                }
                let peer = serde_json::from_str::<Option<TheirPresence>>(&entry.json)
                    .ok()
                    .flatten()
                    .map(|p| Peer {
                        client,
                        name: p
                            .user
                            .and_then(|u| u.name)
                            .unwrap_or_else(|| format!("client {client}")),
                        chapter: p.chapter,
                        cursor: p.cursor,
                    });
                let before = peers.get(&client).and_then(|(_, p)| p.clone());
                changed |= before != peer;
                peers.insert(client, (entry.clock, peer));
            }
        }
        if changed {
            self.emit(self.sync_state(project, link));
        }
    }

    /// Apply an update from the server: to the project's document, then to the project as
    /// changes of `remote:<client>`, saved with the update.
    async fn receive(&self, project: &str, link: &Link, update: &[u8]) {
        let author = Replica::authors(update).ok().and_then(|clients| {
            let me = self.with_replica(project, Replica::client);
            clients.into_iter().find(|c| Some(*c) != me)
        });
        let name = author.map(|client| {
            link.peers
                .borrow()
                .get(&client)
                .and_then(|(_, p)| p.as_ref().map(|p| p.name.clone()))
                .unwrap_or_else(|| client.to_string())
        });
        let origin = Origin::Remote(name.unwrap_or_else(|| "server".into()));
        if !self.projects.is_open(project) {
            self.receive_first(project, link, update, &origin).await;
            return;
        }
        let now = self.env.clock.now_ms();
        let ids = self.env.ids.as_ref();
        let outcome = {
            let Ok(mut open) = self.projects.open_mut(project) else {
                return;
            };
            let open = &mut *open;
            open.mirror_deferred(ids);
            let incoming = match open.replica.apply_remote(update) {
                Ok(incoming) => incoming,
                Err(_) => return,
            };
            let before: Vec<String> = open
                .session
                .project
                .chapters
                .iter()
                .map(|c| c.id.clone())
                .collect();
            let applied = apply_incoming(&mut open.session, &incoming, &origin, now, ids);
            let after: Vec<&str> = open
                .session
                .project
                .chapters
                .iter()
                .map(|c| c.id.as_str())
                .collect();
            let deleted: Vec<String> = before
                .iter()
                .filter(|id| !after.contains(&id.as_str()))
                .cloned()
                .collect();
            let added: Vec<String> = after
                .iter()
                .filter(|id| !before.iter().any(|b| b == *id))
                .map(|s| s.to_string())
                .collect();
            let bible: Vec<(crate::bible::Kind, String)> = incoming
                .bible
                .iter()
                .map(|(k, id, _)| (*k, id.clone()))
                .collect();
            let files: Vec<String> = incoming.files.iter().map(|(p, _)| p.clone()).collect();
            let memory: Vec<crate::memory::Changed> =
                incoming.memory.iter().map(|(m, _)| m.clone()).collect();
            let structure = incoming.chapters.is_some() || incoming.name.is_some();
            let touched = Touched {
                changes: ChangeRecord::of(&applied, &origin, None),
                project: structure,
                chapters: added,
                deleted_chapters: deleted,
                bible: bible.clone(),
                files: files.clone(),
                memory: memory.clone(),
                remote: Some(update.to_vec()),
                ..Touched::default()
            };
            mark_touched(open, touched, ids);
            (applied, structure, bible, files, !memory.is_empty())
        };
        let (applied, structure, bible, files, memory) = outcome;
        self.emit_edits(&applied, &origin);
        let _ = self.projects.read(project, |open| {
            if structure {
                self.emit(ProjectSummary::of(&open.session.project));
            }
            self.emit_bible(&open.session, &bible, &origin);
            self.emit_files(&open.session, &files, &origin);
            if !applied.is_empty() {
                self.emit_history(&open.session);
            }
        });
        if memory {
            self.emit(MemoryChangedEvent {
                project: project.to_string(),
                ..MemoryChangedEvent::default()
            });
        }
        let _ = self.flush(project, false).await;
        let _ = self.refresh_approvals(project, &bible).await;
    }

    /// The first update of a project fetched from the server: once it holds chapters, the
    /// project is made from it, stored and opened.
    async fn receive_first(&self, project: &str, link: &Link, update: &[u8], origin: &Origin) {
        let Some(made) = self.sync.update_pending(project, |replica| {
            let _ = replica.apply_remote(update);
            if replica.is_empty() {
                return None;
            }
            Some(replica.doc_chapters())
        }) else {
            return;
        };
        let Some(chapters) = made else {
            return;
        };
        let Some(replica) = self.sync.take_pending(project) else {
            return;
        };
        let name = replica.name().unwrap_or_else(|| project.to_string());
        let chapters = chapters
            .into_iter()
            .map(|c| crate::project::Chapter::new(c.id, c.title, &c.text))
            .collect();
        let mut session =
            crate::session::Session::new(crate::project::Project::new(project, name, chapters));
        // The bible, files and memory the document holds.
        let everything = replica.everything();
        apply_incoming(
            &mut session,
            &everything,
            origin,
            self.env.clock.now_ms(),
            self.env.ids.as_ref(),
        );
        let now = self.env.clock.now_ms();
        if self.store_fetched(session, replica, now).await.is_ok() {
            link.arrived.notify_all();
        }
    }
}

/// Stop a link: its task ends and its connection closes.
fn stop(link: &Link) {
    link.stopped.set(true);
    if let Some(socket) = link.socket.borrow_mut().take() {
        socket.close();
    }
    link.wake.notify_all();
    link.arrived.notify_all();
}
