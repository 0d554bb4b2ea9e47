//! A story-bible entity as the page reads it, flat: `kind`, `id`, `version`, then each field
//! of its kind (`null` when unset) with its `<field>_origin` beside it ([`FlatEntity`]).
//!
//! Its TypeScript declaration is written from the kinds' field table ([`Kind::fields`]), so
//! it is as precise as the table: `BibleEntity<'character'>` has exactly a character's
//! fields. The table is the one declaration of the fields; nothing here repeats it.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use ts_rs::{Config, TypeVisitor, TS};

use super::{Entity, FieldType, Kind};

/// `TS` for a type whose TypeScript declaration is written here: its name, a function
/// from the config to its declaration, and one that visits the types it names.
macro_rules! declared {
    ($ty:ty = $name:literal, $decl:expr, |$v:ident| $deps:block) => {
        impl TS for $ty {
            type WithoutGenerics = Self;
            type OptionInnerType = Self;

            fn ident(_: &Config) -> String {
                $name.into()
            }

            fn name(_: &Config) -> String {
                $name.into()
            }

            fn inline(cfg: &Config) -> String {
                Self::name(cfg)
            }

            fn decl(cfg: &Config) -> String {
                Self::decl_concrete(cfg)
            }

            fn decl_concrete(cfg: &Config) -> String {
                let decl: fn(&Config) -> String = $decl;
                decl(cfg)
            }

            #[allow(unused_variables)]
            fn visit_dependencies($v: &mut impl TypeVisitor) $deps

            fn output_path() -> Option<PathBuf> {
                Some(PathBuf::from(concat!($name, ".ts")))
            }
        }
    };
}

/// An entity, flat ([`Entity::flat`]). In TypeScript: `BibleEntity<K>`, one kind's fields.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct FlatEntity(Value);

impl FlatEntity {
    /// `entity`, flat.
    pub fn of(entity: &Entity) -> Self {
        Self(entity.flat())
    }
}

declared! {
    FlatEntity = "BibleEntity",
    |_| "type BibleEntity<K extends BibleKind = BibleKind> = K extends BibleKind\n  \
         ? { kind: K, id: string, version: number } & BibleFields[K] & \
         { [F in keyof BibleFields[K] as `${F & string}_origin`]: FieldOrigin | null }\n  \
         : never;"
        .into(),
    |v| {
        v.visit::<Kind>();
        v.visit::<BibleFields>();
        v.visit::<FieldOrigin>();
    }
}

/// The fields of each kind, as TypeScript (`BibleFields`): written from [`Kind::fields`].
pub struct BibleFields;

declared! {
    BibleFields = "BibleFields",
    |_| {
        let mut text = String::from("type BibleFields = {\n");
        for kind in Kind::ALL {
            let fields: Vec<String> = kind
                .fields()
                .iter()
                .map(|f| format!("{}: {} | null", f.name, ts_type(f.ty)))
                .collect();
            text.push_str(&format!("  {}: {{ {} }},\n", kind.name(), fields.join(", ")));
        }
        text.push_str("};");
        text
    },
    |v| {
        v.visit::<super::campaign::PartyMember>();
        v.visit::<super::campaign::Quest>();
    }
}

/// A field value's TypeScript type.
fn ts_type(ty: FieldType) -> &'static str {
    match ty {
        FieldType::Text => "string",
        FieldType::TextList => "Array<string>",
        FieldType::Int => "number",
        FieldType::Span => "{ start: number, end: number }",
        FieldType::Party => "Array<PartyMember>",
        FieldType::Quests => "Array<Quest>",
    }
}

/// Who wrote a field, as TypeScript (`FieldOrigin`): what [`super::Actor::origin`] writes.
pub struct FieldOrigin;

declared! {
    FieldOrigin = "FieldOrigin",
    |_| "type FieldOrigin = 'human' | 'import' | `agent:${string}`;".into(),
    |v| {}
}
