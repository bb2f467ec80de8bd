// stb_image's implementation, compiled here rather than taken from Debian's libstb, so
// that the sanitizers and the fuzzer instrument the decoder (tests/fuzz/fuzz_image.cc),
// and limited to the formats the engine documents: PNG, JPEG and BMP. The engine reads
// files itself (engine/image_input.cc) and decodes from memory.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_NO_LINEAR
#define STBI_NO_HDR
#include <stb/stb_image.h>
