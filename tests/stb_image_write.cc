// stb_image_write's implementation: tests write PNG, BMP and JPEG files to read back.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
