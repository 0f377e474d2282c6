/* The library plugin.c imports, linked at build time beside the Windows and
 * macOS seeds of fuzz_inspect so that theirs have import tables and load
 * commands naming it. */
#ifdef _WIN32
__declspec(dllexport)
#endif
int imported_function(int x) { return x + 1; }
