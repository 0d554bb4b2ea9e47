# Sourced by build-wasm.sh and size.sh: the release build's wasm-opt passes (build-wasm.sh says
# why each) and the wasm features the module uses.
WASM_OPT_PASSES=(--one-caller-inline-max-function-size=20 -Oz --flatten --rereloop -Oz -Oz --low-memory-unused)
WASM_OPT_FEATURES=(--enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext
  --enable-reference-types --enable-multivalue)
# The functions the release moves to the second module, draftsmith_lazy.wasm
# (scripts/split-wasm.mjs), by their original names: the agents, the tools' own code, the model
# providers, tool calls, research, jobs, trees, generation, machine translation, analysis,
# importing a document and the agents' memory context; not what the
# editor runs as the writer types and saves (the tool registry built at start, the memory and
# the bible's data, the proactive monitor, the settings). Only the crate's
# functions and trait impls are named (not std's generics on their types, which wasm-opt may
# have merged with others of the same code); whatever only moved code calls goes with it.
# www/e2e/split.test.mjs checks that starting and editing do not load the second module.
LAZY_FUNCTIONS='^<?draftsmith::(?!.*::(with_spawner|register|wake_[a-z_]+|ensure_settings|get_settings|set_settings)::(\{\{closure\}\}::)?h)(agent|tools::(?!schema::)[a-z_]+::(?!h[0-9a-f]{16}$)|llm|research|policy|core::(research|jobs|tree|mtl|generate|run|agents|Core::(execute_call_with|after_call)::)|memory::(context|suggest|bedside)|persist::import_document|project::(analysis|search)|editor_context)'
