// KHR_draco_mesh_compression through libdraco (C++), behind a C interface
// (gltf/decompress_internal.h). Compiled only when CMake finds libdraco.
// No state outside the objects each call returns: reentrant.
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>

#include <draco/compression/decode.h>
#include <draco/core/decoder_buffer.h>
#include <draco/mesh/mesh.h>

#include "gltf/decompress_internal.h"

struct tb__draco_mesh {
    std::unique_ptr<draco::Mesh> mesh;
};

static void tb__msg(char *msg, size_t size, const char *text)
{
    if (size)
        std::snprintf(msg, size, "%s", text);
}

extern "C" tb__draco_mesh *tb__draco_decode(const uint8_t *data, size_t size, char *msg, size_t msg_size)
{
    try {
        draco::DecoderBuffer buf;
        buf.Init(reinterpret_cast<const char *>(data), size);
        auto type = draco::Decoder::GetEncodedGeometryType(&buf);
        if (!type.ok() || type.value() != draco::TRIANGULAR_MESH) {
            tb__msg(msg, msg_size, type.ok() ? "not a triangle mesh (a point cloud?)" : type.status().error_msg());
            return nullptr;
        }
        draco::Decoder dec;
        auto res = dec.DecodeMeshFromBuffer(&buf);
        if (!res.ok()) {
            tb__msg(msg, msg_size, res.status().error_msg());
            return nullptr;
        }
        auto *m = new tb__draco_mesh;
        m->mesh = std::move(res).value();
        return m;
    } catch (const std::bad_alloc &) {
        tb__msg(msg, msg_size, "out of memory");
    } catch (...) {
        tb__msg(msg, msg_size, "the Draco decoder failed");
    }
    return nullptr;
}

extern "C" size_t tb__draco_point_count(const tb__draco_mesh *m) { return m->mesh->num_points(); }
extern "C" size_t tb__draco_index_count(const tb__draco_mesh *m) { return (size_t)m->mesh->num_faces() * 3; }
extern "C" void tb__draco_free(tb__draco_mesh *m) { delete m; }

template <typename T>
static bool tb__convert(const draco::PointAttribute *a, size_t points, int comps, size_t stride, uint8_t *dst)
{
    T tmp[16];
    for (size_t i = 0; i < points; i++) {
        draco::AttributeValueIndex v = a->mapped_index(draco::PointIndex((uint32_t)i));
        if (!a->ConvertValue<T>(v, (int8_t)comps, tmp))
            return false;
        std::memcpy(dst + i * stride, tmp, sizeof(T) * (size_t)comps);
    }
    return true;
}

extern "C" int tb__draco_attribute(const tb__draco_mesh *m, int id, int ct, int comps, size_t stride, void *dst,
                                   char *msg, size_t msg_size)
{
    const draco::PointAttribute *a = m->mesh->GetAttributeByUniqueId((uint32_t)id);
    if (!a) {
        std::snprintf(msg, msg_size, "the Draco mesh has no attribute with id %d", id);
        return 0;
    }
    if (comps < 1 || comps > 16 || a->num_components() != comps) {
        std::snprintf(msg, msg_size, "the Draco attribute %d has %d components; the accessor %d", id,
                      (int)a->num_components(), comps);
        return 0;
    }
    size_t n = m->mesh->num_points();
    uint8_t *d = static_cast<uint8_t *>(dst);
    bool ok = false;
    switch (ct) {
    case 5120: ok = tb__convert<int8_t>(a, n, comps, stride, d); break;
    case 5121: ok = tb__convert<uint8_t>(a, n, comps, stride, d); break;
    case 5122: ok = tb__convert<int16_t>(a, n, comps, stride, d); break;
    case 5123: ok = tb__convert<uint16_t>(a, n, comps, stride, d); break;
    case 5125: ok = tb__convert<uint32_t>(a, n, comps, stride, d); break;
    case 5126: ok = tb__convert<float>(a, n, comps, stride, d); break;
    default:
        std::snprintf(msg, msg_size, "componentType %d is not a glTF vertex type", ct);
        return 0;
    }
    if (!ok)
        std::snprintf(msg, msg_size, "the Draco attribute %d cannot be converted to componentType %d", id, ct);
    return ok;
}

extern "C" int tb__draco_indices(const tb__draco_mesh *m, int ct, void *dst, size_t point_count, char *msg,
                                 size_t msg_size)
{
    size_t limit = ct == 5121 ? 0xFFu : ct == 5123 ? 0xFFFFu : 0xFFFFFFFFu;
    uint8_t *d = static_cast<uint8_t *>(dst);
    size_t k = 0;
    for (draco::FaceIndex f(0); f < m->mesh->num_faces(); ++f) {
        const auto &face = m->mesh->face(f);
        for (int c = 0; c < 3; c++, k++) {
            size_t v = face[c].value();
            if (v >= point_count || v > limit) {
                std::snprintf(msg, msg_size, "index %zu of face %u is out of range", v, f.value());
                return 0;
            }
            if (ct == 5121)
                d[k] = (uint8_t)v;
            else if (ct == 5123) {
                uint16_t x = (uint16_t)v;
                std::memcpy(d + 2 * k, &x, 2);
            } else {
                uint32_t x = (uint32_t)v;
                std::memcpy(d + 4 * k, &x, 4);
            }
        }
    }
    return 1;
}
