# ledger_embed_migrations(<target> <function-name> <sql files...>)
# Generates a source file defining `std::vector<ledger::Migration> <function-name>()`
# from the given SQL files (named NNNN_name.sql) and adds it to <target>. The files are
# embedded so the CLI and the tests never look for SQL on disk at run time.
function(ledger_embed_migrations target function_name)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/${function_name}.cc")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND "${CMAKE_COMMAND}" -DOUTPUT=${output} -DFUNCTION=${function_name}
            "-DFILES=${ARGN}" -P "${LEDGER_SOURCE_DIR}/cmake/EmbedMigrationsScript.cmake"
    DEPENDS ${ARGN} "${LEDGER_SOURCE_DIR}/cmake/EmbedMigrationsScript.cmake"
    COMMENT "Embedding migrations into ${function_name}"
    VERBATIM)
  target_sources(${target} PRIVATE "${output}")
endfunction()
