#include "build.h"
int main(void) { return 0; }
