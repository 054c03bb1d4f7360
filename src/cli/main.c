#include <stdio.h>
int main(void) { puts("tailbone: under construction"); return 0; }
