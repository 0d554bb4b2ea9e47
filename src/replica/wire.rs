//! The Hocuspocus wire protocol, as bytes: what a client sends a Hocuspocus server (and
//! y-websocket-compatible servers that route by document name) and reads back.
//!
//! Every frame is `varString(document) · varUint(type) · payload` (lib0 encodings, which
//! yrs' `encoding` module writes and reads). Types: Sync 0 (the y-protocols sync messages:
//! step 1 with a state vector, step 2 and update with a Yjs update), Awareness 1, Auth 2
//! (token 0, permission denied 1, authenticated 2), QueryAwareness 3, SyncReply 4 (a sync
//! message needing no step-1 answer), Stateless 5, Close 7, SyncStatus 8 (the server's
//! acknowledgement of each update it applied).

use yrs::encoding::read::{Cursor, Read};
use yrs::encoding::write::Write;

const SYNC: u32 = 0;
const AWARENESS: u32 = 1;
const AUTH: u32 = 2;
const QUERY_AWARENESS: u32 = 3;
const SYNC_REPLY: u32 = 4;
const CLOSE: u32 = 7;
const SYNC_STATUS: u32 = 8;

const STEP1: u32 = 0;
const STEP2: u32 = 1;
const UPDATE: u32 = 2;

const AUTH_TOKEN: u32 = 0;
const AUTH_DENIED: u32 = 1;
const AUTH_OK: u32 = 2;

/// A frame from the server, for this document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// The token was accepted (`read_only`: edits will not be taken).
    Authenticated {
        /// The connection may only read.
        read_only: bool,
    },
    /// The token was refused, with the server's reason.
    Denied(String),
    /// The server asks for the token again.
    TokenRequest,
    /// Sync step 1: the server's state vector (encoded); answer with step 2.
    Step1(Vec<u8>),
    /// Sync step 2 or an update: a Yjs update to apply.
    Update(Vec<u8>),
    /// An awareness update (encoded).
    Awareness(Vec<u8>),
    /// The server acknowledged an update it applied (`false`: it refused it, read-only).
    Ack(bool),
    /// The server ended this document's connection.
    Close(String),
    /// A frame this client has no use for (its type).
    Other(u32),
}

/// A frame that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable sync frame: {0}")]
pub struct WireError(String);

fn start(document: &str, kind: u32) -> Vec<u8> {
    let mut buf = Vec::new();
    buf.write_string(document);
    buf.write_var(kind);
    buf
}

/// The token, sent first.
pub fn token(document: &str, token: &str) -> Vec<u8> {
    let mut buf = start(document, AUTH);
    buf.write_var(AUTH_TOKEN);
    buf.write_string(token);
    buf
}

/// Sync step 1: this document's state vector (encoded).
pub fn step1(document: &str, state_vector: &[u8]) -> Vec<u8> {
    sync(document, STEP1, state_vector)
}

/// Sync step 2: what the server lacks (an update).
pub fn step2(document: &str, update: &[u8]) -> Vec<u8> {
    sync(document, STEP2, update)
}

/// A live update.
pub fn update(document: &str, update: &[u8]) -> Vec<u8> {
    sync(document, UPDATE, update)
}

fn sync(document: &str, kind: u32, bytes: &[u8]) -> Vec<u8> {
    let mut buf = start(document, SYNC);
    buf.write_var(kind);
    buf.write_buf(bytes);
    buf
}

/// An awareness update (encoded).
pub fn awareness(document: &str, update: &[u8]) -> Vec<u8> {
    let mut buf = start(document, AWARENESS);
    buf.write_buf(update);
    buf
}

/// Ask for every client's awareness state.
pub fn query_awareness(document: &str) -> Vec<u8> {
    start(document, QUERY_AWARENESS)
}

/// Leave the document (the socket stays open).
pub fn close(document: &str) -> Vec<u8> {
    start(document, CLOSE)
}

/// Read a frame from the server: `None` when it is for another document.
pub fn decode(document: &str, frame: &[u8]) -> Result<Option<Frame>, WireError> {
    let bad = |e: yrs::encoding::read::Error| WireError(e.to_string());
    let mut cursor = Cursor::new(frame);
    let name = cursor.read_string().map_err(bad)?;
    if name != document {
        return Ok(None);
    }
    let kind: u32 = cursor.read_var().map_err(bad)?;
    let frame = match kind {
        SYNC | SYNC_REPLY => {
            let step: u32 = cursor.read_var().map_err(bad)?;
            let bytes = cursor.read_buf().map_err(bad)?.to_vec();
            match step {
                STEP1 => Frame::Step1(bytes),
                STEP2 | UPDATE => Frame::Update(bytes),
                other => return Err(WireError(format!("sync message type {other}"))),
            }
        }
        AWARENESS => Frame::Awareness(cursor.read_buf().map_err(bad)?.to_vec()),
        AUTH => {
            let sub: u32 = cursor.read_var().map_err(bad)?;
            match sub {
                AUTH_OK => {
                    let scope = if cursor.has_content() {
                        cursor.read_string().map_err(bad)?
                    } else {
                        "read-write"
                    };
                    Frame::Authenticated {
                        read_only: scope == "readonly",
                    }
                }
                AUTH_DENIED => {
                    let reason = if cursor.has_content() {
                        cursor.read_string().map_err(bad)?.to_string()
                    } else {
                        "permission denied".to_string()
                    };
                    Frame::Denied(reason)
                }
                AUTH_TOKEN => Frame::TokenRequest,
                other => return Err(WireError(format!("auth message type {other}"))),
            }
        }
        SYNC_STATUS => Frame::Ack(cursor.read_var::<u32>().map_err(bad)? == 1),
        CLOSE => Frame::Close(if cursor.has_content() {
            cursor.read_string().map_err(bad)?.to_string()
        } else {
            String::new()
        }),
        other => Frame::Other(other),
    };
    Ok(Some(frame))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_those_hocuspocus_writes() {
        // `02 70 31 | 02 | 00 | 03 61 62 63`: the token "abc" for document "p1".
        assert_eq!(
            token("p1", "abc"),
            [2, b'p', b'1', 2, 0, 3, b'a', b'b', b'c']
        );
        assert_eq!(update("p1", &[9, 9]), [2, b'p', b'1', 0, 2, 2, 9, 9]);
        let mut ok = start("p1", AUTH);
        ok.write_var(AUTH_OK);
        ok.write_string("read-write");
        assert_eq!(
            decode("p1", &ok).unwrap(),
            Some(Frame::Authenticated { read_only: false })
        );
        let mut denied = start("p1", AUTH);
        denied.write_var(AUTH_DENIED);
        denied.write_string("project not in token");
        assert_eq!(
            decode("p1", &denied).unwrap(),
            Some(Frame::Denied("project not in token".into()))
        );
        assert_eq!(decode("other", &denied).unwrap(), None);
        assert_eq!(
            decode("p1", &[2, b'p', b'1', 8, 1]).unwrap(),
            Some(Frame::Ack(true))
        );
        assert_eq!(
            decode("p1", &step1("p1", &[0])).unwrap(),
            Some(Frame::Step1(vec![0]))
        );
        assert!(decode("p1", &[2, b'p']).is_err());
    }
}
