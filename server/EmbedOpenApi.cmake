# cmake -DINPUT=docs/openapi.json -DOUTPUT=openapi_document.cc -P EmbedOpenApi.cmake
# Writes OpenApiDocument() returning the file's bytes, so the server never reads docs/
# at run time and the served document is exactly the one in the repository.
file(READ "${INPUT}" content)
string(FIND "${content}" ")ledger_openapi\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from docs/openapi.json by server/EmbedOpenApi.cmake. Do not edit.\n"
  "#include \"server/api.h\"\n\nnamespace ledger::server {\n\n"
  "std::string_view OpenApiDocument() {\n"
  "  static constexpr char kDocument[] = R\"ledger_openapi(${content})ledger_openapi\";\n"
  "  return {kDocument, sizeof(kDocument) - 1};\n}\n\n}  // namespace ledger::server\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
