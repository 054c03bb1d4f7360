/* tailbone/tailbone.h — everything in one include.
 *
 * Runtime layer (no I/O, no JSON, embeddable in a game loop or a WASM
 * build; link tailbone_runtime or libtailbone):
 *   common.h    results and errors
 *   runtime.h   skeletons, clip sampling, local-to-world, skinning
 *   spring.h    the tail spring-chain solver (SPEC B)
 * Offline layer (reads and writes files; link libtailbone):
 *   gltf.h      lossless glTF/GLB documents
 *   model.h     a skin and its meshes decoded into flat arrays
 *   humanoid.h  humanoid roles from joint names
 *   clip.h      glTF animations as runtime clips
 *   appendage.h detection and repair of tails and other appendages (SPEC A)
 *   measure.h   skin stretch during playback (SPEC C)
 *   retarget.h  clip transfer and grounding (SPEC D)
 *   bake.h      the spring tail baked into keyframes (SPEC D)
 *   fix.h       the whole job: repair, transfer, bake, measure (SPEC A, D, C)
 *   synth.h     synthetic test characters with ground truth
 */
#ifndef TAILBONE_TAILBONE_H
#define TAILBONE_TAILBONE_H

#include "tailbone/common.h"
#include "tailbone/runtime.h"
#include "tailbone/spring.h"

#include "tailbone/appendage.h"
#include "tailbone/bake.h"
#include "tailbone/clip.h"
#include "tailbone/fix.h"
#include "tailbone/gltf.h"
#include "tailbone/humanoid.h"
#include "tailbone/measure.h"
#include "tailbone/model.h"
#include "tailbone/retarget.h"
#include "tailbone/synth.h"

#endif
