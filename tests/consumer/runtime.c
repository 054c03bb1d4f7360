/* The runtime alone (libtailbone_runtime.a): a transform to a matrix. */
#include <math.h>
#include <stdio.h>

#include <tailbone/runtime.h>

int main(void)
{
    tb_transform x = {{1, 2, 3}, {0, 0, 0.70710678f, 0.70710678f}, {1, 1, 1}};
    float m[16];
    tb_transform_to_matrix(&x, m);
    /* 90 degrees about z: x axis to y; translation in the last column */
    int ok = fabsf(m[1] - 1) < 1e-5f && fabsf(m[0]) < 1e-5f && m[12] == 1 && m[13] == 2 && m[14] == 3;
    printf("consumer_runtime: %s\n", ok ? "ok" : "wrong matrix");
    return ok ? 0 : 1;
}
