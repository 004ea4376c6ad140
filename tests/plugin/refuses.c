/* refuses.c: a plug-in whose colosim_plugin_init fails (as one built for another colosim
 * would), for the loader's message (tests/cli/plugins.sh). */
int colosim_plugin_init(int abi);
int colosim_plugin_init(int abi)
{
    (void)abi;
    return 7;
}
