/* tailbone/common.h — results, errors and small shared types.
 *
 * Every fallible call returns a tb_result and, when given a non-NULL
 * tb_error*, fills it with the code, the place (a JSON path such as
 * "/accessors/3/count", a byte offset such as "byte 1234", or a file name)
 * and a one-line message. Tests compare codes; people read messages.
 * Conventions (glTF 2.0): metres, +Y up, quaternions (x, y, z, w),
 * column-major 4x4 matrices, radians, seconds.
 */
#ifndef TAILBONE_COMMON_H
#define TAILBONE_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tb_result {
    TB_OK = 0,
    TB_ERR_ARG,            /* caller passed an invalid argument */
    TB_ERR_OOM,            /* out of memory */
    TB_ERR_IO,             /* cannot open/read/write a file */
    TB_ERR_MISSING_FILE,   /* an external file named by a URI is absent */
    TB_ERR_TRUNCATED,      /* file ends before the structure it announces */
    TB_ERR_GLB_MAGIC,      /* not a GLB (bad magic) and not JSON either */
    TB_ERR_GLB_VERSION,    /* GLB container version other than 2 */
    TB_ERR_GLB_LENGTH,     /* header or chunk length inconsistent */
    TB_ERR_GLB_CHUNK,      /* chunk type wrong or out of order */
    TB_ERR_JSON_SYNTAX,    /* JSON does not parse (line:column in where) */
    TB_ERR_JSON_TYPE,      /* a glTF property has the wrong JSON type */
    TB_ERR_MISSING_FIELD,  /* a required glTF property is absent */
    TB_ERR_INDEX,          /* an index refers past the end of its array */
    TB_ERR_BOUNDS,         /* data reaches past its bufferView or buffer */
    TB_ERR_ALIGN,          /* component data misaligned */
    TB_ERR_NONFINITE,      /* NaN or infinity where a finite value is needed */
    TB_ERR_URI,            /* malformed data: URI or unsupported scheme */
    TB_ERR_UNSUPPORTED,    /* compression or required extension we cannot decode */
    TB_ERR_HIERARCHY,      /* node graph is not a forest, or skin joint not in scene */
    TB_ERR_NO_SKIN,        /* no skinned mesh where one is needed */
    TB_ERR_NO_HIPS,        /* skeleton has no recognisable hips */
    TB_ERR_INVALID,        /* any other value the glTF spec forbids */
    TB_RESULT_COUNT
} tb_result;

typedef struct tb_error {
    tb_result code;
    char where[192];   /* JSON path, "byte N", "line L column C" or file */
    char message[320]; /* one line, no trailing newline */
} tb_error;

/* Short stable name of a result, e.g. "truncated". Never NULL. */
const char *tb_result_name(tb_result r);
/* Default message for a result (the one table of messages). Never NULL. */
const char *tb_result_message(tb_result r);

/* Tail bones made by tailbone (the one rule, in the runtime: the spring finds
 * its chains by it and every offline pass asks it). A name is
 * PREFIX "Tail" X "_" N: X empty (chain 0) or one capital B..Z (chain 1..25:
 * "TailB_2" is chain 1); N a whole number 1..999999 written without sign or
 * leading zero (the index along the chain), or "End" (index 0, the weightless
 * end). PREFIX is empty or ends in a character that is not a letter
 * ("mixamorig:", "Armature_", "rig|"), so "Ponytail_1" is no tail bone.
 * Examples: "Tail_3" → chain 0, index 3; "Armature_Tail_1", "Tail_100" are
 * tail bones; "Tail_0", "Tail_01", "TailA_1", "Tail1" are not. How long a
 * chain may be is the spring's concern (64 bones), not the name's.
 * Returns 1 for a tail bone name and fills what is not NULL. */
int tb_tail_name_parse(const char *name, int *chain, int *index);
/* The same, with prefix_len: the length of the name up to and including the
 * '_' before N; the bones of one chain share it. */
int tb_tail_name_split(const char *name, size_t *prefix_len, int *chain, int *index);
/* Writes the name tailbone gives a bone of chain `chain` (0..25): "Tail_N" /
 * "TailB_N" … for index N >= 1, "Tail_End" / "TailB_End" … for index 0, or,
 * with index -1, the chain's prefix alone ("Tail_", "TailB_"). The inverse of
 * tb_tail_name_parse for its names without PREFIX. Returns what snprintf
 * returns (the length wanted; out holds at most size - 1 characters). */
int tb_tail_name_format(char *out, size_t size, int chain, int index);

#ifdef __cplusplus
}
#endif
#endif
