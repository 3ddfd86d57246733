# shellcheck shell=bash
# The programs each product image holds (sourced by images.sh and
# oci-index.sh): the sidecar runs its uploader from beside itself
# (sidecar/upload/README.md).
product_programs() { # PRODUCT
	case $1 in
	oomlens-sidecar) echo oomlens-sidecar oomlens-sidecar-upload ;;
	*) echo "$1" ;;
	esac
}
