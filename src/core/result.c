/* The one table of result names and messages, and the one error helper. */
#include <stdarg.h>
#include <stdio.h>

#include "core/base.h"

static const struct {
    const char *name;
    const char *message;
} tb__results[TB_RESULT_COUNT] = {
    [TB_OK] = {"ok", "success"},
    [TB_ERR_ARG] = {"bad-argument", "invalid argument"},
    [TB_ERR_OOM] = {"out-of-memory", "out of memory"},
    [TB_ERR_IO] = {"io", "cannot read or write the file"},
    [TB_ERR_MISSING_FILE] = {"missing-file", "external file not found"},
    [TB_ERR_TRUNCATED] = {"truncated", "file is truncated"},
    [TB_ERR_GLB_MAGIC] = {"bad-magic", "not a glTF file (bad GLB magic, not JSON)"},
    [TB_ERR_GLB_VERSION] = {"bad-version", "unsupported GLB container version"},
    [TB_ERR_GLB_LENGTH] = {"bad-length", "GLB length fields are inconsistent"},
    [TB_ERR_GLB_CHUNK] = {"bad-chunk", "GLB chunk type or order is wrong"},
    [TB_ERR_JSON_SYNTAX] = {"json-syntax", "JSON syntax error"},
    [TB_ERR_JSON_TYPE] = {"json-type", "glTF property has the wrong JSON type"},
    [TB_ERR_MISSING_FIELD] = {"missing-field", "required glTF property is missing"},
    [TB_ERR_INDEX] = {"bad-index", "index out of range"},
    [TB_ERR_BOUNDS] = {"out-of-bounds", "data reaches past the end of its buffer"},
    [TB_ERR_ALIGN] = {"misaligned", "component data is misaligned"},
    [TB_ERR_NONFINITE] = {"non-finite", "NaN or infinite value"},
    [TB_ERR_URI] = {"bad-uri", "malformed or unsupported URI"},
    [TB_ERR_UNSUPPORTED] = {"unsupported", "data we cannot decode (compression or unknown required extension)"},
    [TB_ERR_HIERARCHY] = {"bad-hierarchy", "node hierarchy is invalid"},
    [TB_ERR_NO_SKIN] = {"no-skin", "no skinned mesh"},
    [TB_ERR_NO_HIPS] = {"no-hips", "skeleton has no recognisable hips"},
    [TB_ERR_INVALID] = {"invalid", "value not allowed by glTF 2.0"},
};

const char *tb_result_name(tb_result r)
{
    if ((int)r < 0 || r >= TB_RESULT_COUNT || !tb__results[r].name)
        return "unknown";
    return tb__results[r].name;
}

const char *tb_result_message(tb_result r)
{
    if ((int)r < 0 || r >= TB_RESULT_COUNT || !tb__results[r].message)
        return "unknown error";
    return tb__results[r].message;
}

tb_result tb__fail(tb_error *err, tb_result code, const char *where, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        snprintf(err->where, sizeof err->where, "%s", where ? where : "");
        if (fmt) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err->message, sizeof err->message, fmt, ap);
            va_end(ap);
        } else {
            snprintf(err->message, sizeof err->message, "%s", tb_result_message(code));
        }
    }
    return code;
}
