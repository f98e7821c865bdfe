/* scale.h */
static float scale(void) { return SCALE_FACTOR; }
