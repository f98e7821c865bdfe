int compute();
int table = compute();
static int hidden = compute() + 1;
int use() { return hidden; }
