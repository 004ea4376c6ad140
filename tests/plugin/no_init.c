/* no_init.c: a shared object that is not a colosim plug-in (no colosim_plugin_init), for the
 * loader's message (tests/cli/plugins.sh). */
int colosim_not_a_plugin(void);
int colosim_not_a_plugin(void)
{
    return 0;
}
