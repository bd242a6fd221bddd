//! wirespeed facade
