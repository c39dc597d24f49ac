# Which database engines the build has: one cache entry per engine, LEDGER_WITH_<ENGINE>,
# with three values:
#
#   AUTO  (the default) built when its client library is found. The answer is not cached:
#         a configure after the library was installed builds the engine, so a build
#         directory configured before (by scripts/quickstart.sh, say) does not stay
#         without it.
#   ON    required: the configure fails, naming the engine and what is missing, when its
#         client library is not found. scripts/test.sh sets every engine ON.
#   OFF   not built.
#
# After ledger_engine_option() the caller's LEDGER_WITH_<ENGINE> reads ON or OFF, the
# engine the build has or not (a normal variable hiding the cache entry), which is what
# engines/ and ledgerConfig.cmake test.

# ledger_engine_option(<ENGINE> <description> <found> <what is missing when not found>)
function(ledger_engine_option engine description found missing)
  set(option LEDGER_WITH_${engine})
  set(${option} AUTO CACHE STRING "${description}: AUTO (when its client library is found), ON (required) or OFF")
  set_property(CACHE ${option} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${${option}}" choice)
  if(choice STREQUAL "AUTO")
    set(built ${found})
  elseif(choice MATCHES "^(ON|YES|TRUE|Y|1)$")
    if(NOT found)
      message(FATAL_ERROR
        "${option}=${${option}} requires the ${description}, but ${missing}. Install it "
        "(bash scripts/install-deps.sh test), or configure with -D${option}=AUTO to build "
        "without it.")
    endif()
    set(built ON)
  elseif(choice MATCHES "^(OFF|NO|FALSE|N|0)$")
    set(built OFF)
  else()
    message(FATAL_ERROR "${option}=${${option}}: expected AUTO, ON or OFF")
  endif()
  set(why "")
  if(NOT built AND NOT found)
    set(why ": ${missing}")
  endif()
  message(STATUS "ledger: ${description}: ${built} (${option}=${${option}}${why})")
  set(${option} ${built} PARENT_SCOPE)
endfunction()
