/* the pragma libtcc would obey past the manifest, one include away from the source */
#pragma comment(option, "-w")
