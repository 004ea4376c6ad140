/* colosim/colosim.h for plug-ins built in the tree (tests/CMakeLists.txt): the source tree's
 * header, as an installed prefix's include/colosim/colosim.h is reached. */
#include "../../../../sim/colosim.h"
