/* A small library compiled at build time, for several targets, as seed
 * inputs of fuzz_inspect: what ireepkg-inspect reads in real packages. */
extern int imported_function(int);

int exported_counter = 1;

int exported_function(int x) { return imported_function(x) + exported_counter; }

__attribute__((visibility("hidden"))) int hidden_function(void) { return 2; }
